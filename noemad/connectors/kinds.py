"""Each connector kind's factory, by the `kind` of its settings, imported when a connector of that kind starts.

A kind's module is imported only when a mind has such a connector: a daemon
without a Matrix room never loads the Matrix client. A kind adds one entry:
its module's `build(settings, context) -> Connector`.
"""

from __future__ import annotations

import importlib
from typing import cast

from noemad.connectors.port import Connector, ConnectorContext, ConnectorSettings, Factory

MODULES: dict[str, str] = {
    "matrix": "noemad.connectors.matrix",
    "webhook": "noemad.connectors.webhook",
}
FACTORIES: dict[str, Factory] = {}  # a factory given here wins over the module's (tests give their own)


class KindUnavailable(Exception):
    """This noemad cannot run connectors of a kind (its module or client library is missing)."""


def factory(kind: str) -> Factory:
    """The factory of connectors of `kind`."""
    given = FACTORIES.get(kind)
    if given is not None:
        return given
    try:
        module = importlib.import_module(MODULES[kind])
    except ImportError as exc:
        raise KindUnavailable(f"this noemad cannot run {kind} connectors ({exc}); install what it names and restart") from None
    return cast(Factory, module.build)


def build(settings: ConnectorSettings, context: ConnectorContext) -> Connector:
    """The connector `settings` describe, built with `context`."""
    return factory(settings.kind)(settings, context)
