"""The errors noemactl reports: each carries one sentence to print and an exit code.

`main()` in `noemactl.app` prints `noemactl: <sentence>` on stderr (with
`--json`, the problem document instead: `{"type", "title", "status",
"detail"}` on one line of stderr) and exits with the error's class:

    0  done
    1  anything else: noemad failed (5xx), a job failed, the connection broke
    2  bad input: the command line is unusable (nothing was sent), or noemad
       refused what was sent as invalid (400, 413, 422)
    3  noemad cannot be reached on its socket
    4  not found: no such mind, event, belief, job, rule ... (404)
    5  refused by state: a conflict with what exists (409), or a confirmation
       that did not match

A usage error found while parsing (a missing argument, an unknown option) is
`noemactl: error: <sentence>` and a `Try 'noemactl CMD --help'.` line.
"""

from __future__ import annotations

from typing import Any

EXIT_OTHER = 1
EXIT_BAD_INPUT = 2
EXIT_UNREACHABLE = 3
EXIT_NOT_FOUND = 4
EXIT_REFUSED = 5


def exit_code_for(status: int) -> int:
    """The exit code of an answer with this HTTP status (see the module's table)."""
    if status in (400, 413, 422):
        return EXIT_BAD_INPUT
    if status == 404:
        return EXIT_NOT_FOUND
    if status == 409:
        return EXIT_REFUSED
    return EXIT_OTHER


class CtlError(Exception):
    """Base of every error noemactl reports on purpose."""

    exit_code: int = EXIT_OTHER
    status: int = 500  # the HTTP status it corresponds to, for the JSON problem document
    title: str = "Command failed"

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence

    def problem(self) -> dict[str, Any]:
        """The problem document `--json` prints on stderr (RFC 9457's members, as noemad answers them)."""
        return {"type": "about:blank", "title": self.title, "status": self.status, "detail": self.sentence}


class BadInput(CtlError):
    """The command line holds something unusable (invalid JSON, empty text); nothing was sent."""

    exit_code = EXIT_BAD_INPUT
    status = 400
    title = "Bad command line"


class UsageError(BadInput):
    """The command line does not parse (found by the parser, before the command ran); `command` is what to ask --help."""

    def __init__(self, sentence: str, command: str) -> None:
        super().__init__(sentence)
        self.command = command

    @property
    def hint(self) -> str:
        """The line printed after the error."""
        return f"Try '{self.command} --help'."


class Refused(CtlError):
    """Nothing was done because of what exists: a confirmation did not match, a mind is in the way."""

    exit_code = EXIT_REFUSED
    status = 409
    title = "Refused"


class DaemonUnreachable(CtlError):
    """noemad is not running on the socket, or the socket cannot be opened."""

    exit_code = EXIT_UNREACHABLE
    status = 503
    title = "noemad unreachable"

    def __init__(self, sentence: str, socket: str) -> None:
        super().__init__(sentence)
        self.socket = socket


class ApiError(CtlError):
    """noemad answered with an error (problem+json); `sentence` is its `detail`."""

    def __init__(self, status: int, title: str, detail: str, document: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.exit_code = exit_code_for(status)
        self.document = document

    def problem(self) -> dict[str, Any]:
        """noemad's own problem document when it sent one, else one made of its status and sentence."""
        return dict(self.document) if self.document else super().problem()
