"""Connectors: the mind's presence in the rooms and endpoints it lives in (Matrix, webhooks).

An edge, like the API: above the supervisor (noemad/runtime/), which never
imports them. `port` is what every kind implements and what it is given;
`manager` runs them beside the supervisor; `kinds` builds one from its
settings (`[[minds.NAME.connectors]]`, noemad/config/connectors.py).
"""
