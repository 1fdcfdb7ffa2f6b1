"""The Matrix connector: a mind in Matrix rooms, through matrix-nio (`rooms.MatrixRooms`; `translate`: what a room event becomes)."""

from __future__ import annotations

from noemad.config.connectors import MatrixConnector
from noemad.connectors.port import Connector, ConnectorContext, ConnectorSettings


def build(settings: ConnectorSettings, context: ConnectorContext) -> Connector:
    """The Matrix connector `settings` describe (the manager's factory for kind "matrix")."""
    from noemad.connectors.matrix.rooms import MatrixRooms  # nio is imported only when a mind has a Matrix room

    assert isinstance(settings, MatrixConnector)
    return MatrixRooms(settings, context)
