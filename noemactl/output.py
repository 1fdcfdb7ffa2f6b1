"""Where noemactl writes: data on stdout, everything else on stderr.

On a terminal the data is drawn with rich (colours unless `NO_COLOR` is set);
piped, it is plain text without ANSI codes, and lines are neither wrapped nor
truncated so they survive `grep` and `cut`. `--json` output bypasses rich
altogether: stable JSON, as noemad answered it.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

PIPED_WIDTH = 4096  # columns when stdout is not a terminal: in effect, never wrap


@cache
def stdout_console() -> Console:
    """The console for data (stdout)."""
    console = Console(highlight=False, markup=False, emoji=False, soft_wrap=True)
    if not console.is_terminal:
        console.width = PIPED_WIDTH
    return console


@cache
def stderr_console() -> Console:
    """The console for notes, hints, prompts and errors (stderr)."""
    return Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


class Output:
    """The two streams of one command."""

    def __init__(self) -> None:
        self.out = stdout_console()
        self.err = stderr_console()

    @property
    def terminal(self) -> bool:
        """Whether stdout is a terminal (human view with truncation and colour)."""
        return self.out.is_terminal

    @property
    def width(self) -> int:
        """Columns available on stdout."""
        return self.out.width

    def show(self, *renderables: RenderableType) -> None:
        """Print data on stdout."""
        for renderable in renderables:
            self.out.print(renderable)

    def json(self, value: Any) -> None:
        """Print one JSON document on stdout (indented, keys in the daemon's order)."""
        sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def json_line(self, value: Any) -> None:
        """Print one JSON object on one line (JSON Lines) and flush it at once."""
        sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def note(self, message: str | Text) -> None:
        """A note or hint on stderr."""
        self.err.print(message if isinstance(message, Text) else Text(message, style="dim"))

    def ask(self, prompt: str) -> str:
        """Ask a question on stderr; read the answer from stdin."""
        return self.err.input(Text(prompt, style="bold"))


def print_error(sentence: str) -> None:
    """Print `noemactl: <sentence>` on stderr."""
    stderr_console().print(Text.assemble(("noemactl:", "bold red"), " ", sentence))
