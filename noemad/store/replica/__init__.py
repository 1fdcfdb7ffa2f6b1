"""Continuous replication of the store with Litestream, which noemad runs as its child.

`litestream` holds what noemad tells Litestream (its config file, its
environment, where the program is); `child` runs and watches the process
and says how the replica is doing; `restore` brings a store back from the
replica on a new host.
"""
