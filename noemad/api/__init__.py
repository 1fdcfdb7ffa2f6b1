"""The HTTP API over the Unix socket: FastAPI routes and pydantic schemas."""

from noemad.api.app import create_app

__all__ = ["create_app"]
