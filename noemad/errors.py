"""The one exception tree of noemad.

Every error a user can meet carries an HTTP status and a sentence that says
what is wrong and what to do; the API answers it as problem+json and the CLI
prints the sentence.
"""

from __future__ import annotations


class NoemaError(Exception):
    """Base of every error noemad raises on purpose."""

    status: int = 500
    title: str = "Internal error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class InvalidInput(NoemaError):
    """A request, argument or file is malformed or out of range."""

    status = 422
    title = "Invalid input"


class MalformedBody(InvalidInput):
    """A request body is not valid JSON."""

    status = 400
    title = "Malformed body"


class BodyTooLarge(InvalidInput):
    """A request body is larger than the documented limit."""

    status = 413
    title = "Body too large"


class InvalidLink(InvalidInput):
    """An event names a cause, parent or ref that does not exist or belongs to another mind."""

    title = "Invalid link"


class NotFound(NoemaError):
    """Something named does not exist."""

    status = 404
    title = "Not found"


class MindNotFound(NotFound):
    """No mind has that name."""

    title = "Mind not found"


class EventNotFound(NotFound):
    """No event has that id."""

    title = "Event not found"


class Conflict(NoemaError):
    """The request clashes with what exists."""

    status = 409
    title = "Conflict"


class MindExists(Conflict):
    """A mind of that name already exists."""

    title = "Mind exists"


class ConfirmationMismatch(Conflict):
    """A destructive request did not confirm the name it acts on."""

    title = "Confirmation required"


class ConfigError(NoemaError):
    """noemad.toml (or an override) does not validate."""

    status = 422
    title = "Invalid configuration"


class DaemonError(NoemaError):
    """The daemon cannot start or run as asked."""

    title = "Daemon error"


class SocketInUse(DaemonError):
    """A live daemon already serves the socket."""

    title = "Socket in use"


class StoreError(NoemaError):
    """The store cannot be opened, migrated or written."""

    title = "Store error"


class ShuttingDown(NoemaError):
    """The daemon is stopping and takes no new work."""

    status = 503
    title = "Shutting down"
