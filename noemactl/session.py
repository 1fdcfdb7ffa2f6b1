"""The state one invocation shares between the global options and its command.

The client and the consoles are made on first use, so `--version`, `--help`
and shell completion never import httpx.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from noemactl.client import Client
    from noemactl.output import Output


@dataclass
class Session:
    """Global options (`--socket`, `--json`) and the connection they lead to."""

    socket_flag: str | None = None
    json: bool = False
    _client: Client | None = field(default=None, repr=False)
    _output: Output | None = field(default=None, repr=False)

    @property
    def socket(self) -> Path:
        """The resolved socket path."""
        from noemactl.client import resolve_socket

        return resolve_socket(self.socket_flag)

    @property
    def client(self) -> Client:
        """The HTTP client over noemad's socket."""
        if self._client is None:
            from noemactl.client import Client

            self._client = Client(self.socket)
        return self._client

    @property
    def output(self) -> Output:
        """stdout for data, stderr for the rest."""
        if self._output is None:
            from noemactl.output import Output

            self._output = Output()
        return self._output

    def wants_json(self, local: bool = False) -> bool:
        """Whether JSON was asked for, globally or on the command."""
        return self.json or local

    def present(self, data: Any, local_json: bool, human: Callable[[], Any]) -> None:
        """Print `data` as JSON when asked for, else the renderables `human()` returns (one or a list).

        `human` is called only for the human view, so renderers (and rich)
        are imported only then.
        """
        if self.wants_json(local_json):
            self.output.json(data)
            return
        shown = human()
        self.output.show(*(shown if isinstance(shown, list) else [shown]))

    def close(self) -> None:
        """Close the connection, if one was made."""
        if self._client is not None:
            self._client.close()
            self._client = None
