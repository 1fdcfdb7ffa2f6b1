"""The daemon process, above the API: start and stop, the listening socket, sd_notify, config reload."""
