"""The Matrix connector: a mind in Matrix rooms, through matrix-nio."""
