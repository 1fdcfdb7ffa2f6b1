"""Mind actors, the daemon supervisor, sd_notify, the socket and config reload."""
