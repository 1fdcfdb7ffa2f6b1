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


class RuleRefused(InvalidInput):
    """A wake rule or default behaviour is of bad shape; `detail` says what is wrong and what to write."""

    title = "Rule refused"


class GovernanceRefused(InvalidInput):
    """A governance capability was composed with a part that could never work; refused before any turn runs."""

    title = "Governance refused"


class NotFound(NoemaError):
    """Something named does not exist."""

    status = 404
    title = "Not found"


class MindNotFound(NotFound):
    """No mind has that name."""

    title = "Mind not found"


class RuleNotFound(NotFound):
    """The mind has no wake rule of that name."""

    title = "Rule not found"


class EventNotFound(NotFound):
    """No event has that id."""

    title = "Event not found"


class NoReplica(NotFound):
    """noemad.toml has no [replica]: the store is not replicated."""

    title = "No replica"


class Conflict(NoemaError):
    """The request clashes with what exists."""

    status = 409
    title = "Conflict"


class RuleExists(Conflict):
    """The mind already has a wake rule of that name."""

    title = "Rule exists"


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


class StoreFull(StoreError):
    """The disk (or the database's size limit) is full: nothing of the write was stored; reads keep working."""

    status = 507
    title = "Storage full"
    retry_after = 30  # seconds: freeing space is an operator's act, not a blip

    def __init__(self, path: str) -> None:
        super().__init__(
            f"the disk holding the database ({path}) is full, so nothing of this request was stored;"
            " free space there, then retry (reads keep working)"
        )


class BackupFailed(StoreError):
    """A backup snapshot could not be made or did not verify; the store itself is untouched."""

    status = 507
    title = "Backup failed"


class ArchiveFailed(StoreError):
    """An archive file could not be written; the chunk it was for stays in the store."""

    status = 507
    title = "Archive failed"


class RestoreFailed(StoreError):
    """A restore from the replica could not be made, did not verify, or would overwrite a store."""

    title = "Restore failed"


class BackupRunning(Conflict):
    """Another backup is being made; one at a time keeps the disk and the reader free."""

    title = "Backup running"


class ArchiveRunning(Conflict):
    """An archive run of this mind is already going."""

    title = "Archive running"


class ShuttingDown(NoemaError):
    """The daemon is stopping and takes no new work."""

    status = 503
    title = "Shutting down"


class ModelError(NoemaError):
    """A model call failed or was not made; `category` names the kind for the ledger."""

    status = 502
    title = "Model call failed"
    category = "error"
    retryable = False

    def __init__(self, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.retry_after = retry_after  # seconds the provider asked us to wait, if it said
        self.call_id: int | None = None  # the model_calls row that records it, once recorded


class RateLimited(ModelError):
    """The provider said too many requests (429), with how long to wait."""

    status = 429
    title = "Rate limited"
    category = "rate_limited"
    retryable = True


class Overloaded(ModelError):
    """The provider is overloaded (529)."""

    status = 503
    title = "Model overloaded"
    category = "overloaded"
    retryable = True


class Unavailable(ModelError):
    """The provider could not be reached or failed on its side (5xx, connection)."""

    status = 503
    title = "Model unavailable"
    category = "unavailable"
    retryable = True


class ModelTimeout(ModelError):
    """The provider did not answer within the call's timeout."""

    status = 504
    title = "Model timeout"
    category = "timeout"
    retryable = True


class ContextLength(ModelError):
    """The prompt is longer than the model takes; `tokens` is the stated count, if given."""

    status = 422
    title = "Context too long"
    category = "context_length"

    def __init__(self, detail: str, tokens: int | None = None) -> None:
        super().__init__(detail)
        self.tokens = tokens


class InvalidRequest(ModelError):
    """The provider refused the request as malformed (400)."""

    status = 422
    title = "Invalid model request"
    category = "invalid"


class ToolRoundsExhausted(ModelError):
    """The model still asked for tools after its last allowed round; those calls were not run."""

    title = "Tool rounds used up"
    category = "tool_rounds"


class AuthFailed(ModelError):
    """The provider refused the credentials (401/403)."""

    status = 502
    title = "Model authentication failed"
    category = "auth"


class Refused(ModelError):
    """The call was not made: a hold, a pause, a stopping daemon or a budget stood in the way."""

    status = 503
    title = "Model call refused"
    category = "refused"

    def __init__(self, detail: str, until: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(detail, retry_after)
        self.until = until  # when the hold ends (ISO), if a hold refused it


class BudgetExceeded(Refused):
    """The call would exceed its mind's daily budget for the role."""

    title = "Budget exceeded"
    category = "budget"


class NoModelConfigured(Refused):
    """No model is configured for the role; callers take their deterministic path."""

    title = "No model configured"
    category = "no_model"
