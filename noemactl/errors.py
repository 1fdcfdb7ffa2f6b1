"""The errors noemactl reports: each carries one sentence to print and an exit code.

`main()` in `noemactl.app` prints `noemactl: <sentence>` on stderr and exits
with the error's code: 1 for a refused or failed request, 2 for bad input on
the command line (nothing was sent), 3 when noemad cannot be reached.
"""

from __future__ import annotations


class CtlError(Exception):
    """Base of every error noemactl reports on purpose."""

    exit_code: int = 1

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


class BadInput(CtlError):
    """The command line holds something unusable (invalid JSON, empty text); nothing was sent."""

    exit_code = 2


class DaemonUnreachable(CtlError):
    """noemad is not running on the socket, or the socket cannot be opened."""

    exit_code = 3

    def __init__(self, sentence: str, socket: str) -> None:
        super().__init__(sentence)
        self.socket = socket


class ApiError(CtlError):
    """noemad answered with an error (problem+json); `sentence` is its `detail`."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
