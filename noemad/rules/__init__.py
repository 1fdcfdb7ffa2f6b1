"""Wake rules: their one shape and validator, how a stimulus is matched, where they are stored.

The gate (`noemad.gate`) runs them; everything that changes them (the API,
the CLI through it, the config's `[minds.NAME.gate]`, and the mind's own
tools during a turn) goes through `read_rule` and `noemad.rules.table`.
They sit with the records, below the turn, so the mind's tools can use them.
"""
