"""The engine, below the API: the supervisor, one actor per mind, the event bus."""
