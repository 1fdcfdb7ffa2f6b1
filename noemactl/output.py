"""Where noemactl writes: data on stdout, everything else on stderr.

On a terminal the data is drawn with rich; with `NO_COLOR` set to anything
but the empty string (no-color.org) it carries no escapes at all (rich alone
would drop the colours and keep bold and dim). Piped, it is plain text without ANSI codes, and lines are neither wrapped nor
truncated so they survive `grep` and `cut`. `--json` output bypasses rich
altogether: stable JSON, as noemad answered it.

Text a mind holds came from anyone who could send it a message, so the
consoles make every C0/C1 control character and DEL visible before it reaches
the terminal (`visible`): an ESC in a message, a memory or an author's name is
shown as `␛`, never obeyed. It is done once, where rich turns renderables into
segments, so every human view and every note or error is covered; `--json`
keeps the values (C1 characters are written as JSON escapes, see `safe_json`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

if TYPE_CHECKING:
    from noemactl.errors import CtlError

PIPED_WIDTH = 4096  # columns when stdout is not a terminal: in effect, never wrap


def _control_pictures() -> dict[int, str]:
    # C0 and DEL have one-cell pictures (U+2400..U+2421); C1 has none, so its code is spelt out.
    table = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\n\t"}
    table[0x7F] = "\u2421"
    table.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})
    return table


CONTROL_PICTURES = _control_pictures()
_C1 = re.compile("[\u0080-\u009f]")


def visible(text: str) -> str:
    """`text` with every control character but newline and tab made visible (ESC as `␛`, CSI U+009B as `\\x9b`)."""
    return text.translate(CONTROL_PICTURES)


def safe_json(document: str) -> str:
    """JSON text with C1 controls written as `\\u0080`..`\\u009f` (JSON escapes C0 itself): the same value, nothing a terminal obeys."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


class ShownConsole(Console):
    """A rich console that never lets a control character from data reach the terminal.

    rich's own codes (colours, cursor moves) travel as styles or control
    segments and are written after this point; only the text is rewritten.
    """

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and not segment.text.isprintable():
                yield Segment(visible(segment.text), segment.style)
            else:
                yield segment


def no_color() -> bool:
    """Whether `NO_COLOR` asks for no colour: set and not empty (no-color.org)."""
    return bool(os.environ.get("NO_COLOR"))


def _colours() -> Literal["auto"] | None:
    # None makes rich write text with no escape at all; its own NO_COLOR handling keeps bold and dim.
    return None if no_color() else "auto"


@cache
def stdout_console() -> Console:
    """The console for data (stdout)."""
    console = ShownConsole(highlight=False, markup=False, emoji=False, soft_wrap=True, color_system=_colours())
    if not console.is_terminal:
        console.width = PIPED_WIDTH
    return console


@cache
def stderr_console() -> Console:
    """The console for notes, hints, prompts and errors (stderr)."""
    return ShownConsole(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True, color_system=_colours())


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
        sys.stdout.write(safe_json(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")
        sys.stdout.flush()

    def json_line(self, value: Any) -> None:
        """Print one JSON object on one line (JSON Lines) and flush it at once."""
        sys.stdout.write(safe_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) + "\n")
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


def report_error(error: CtlError, as_json: bool) -> None:
    """Report an error on stderr: its problem document as one JSON line, or `noemactl: <sentence>`.

    A usage error reads `noemactl: error: <sentence>` with a `Try '... --help'.` line after it.
    """
    if as_json:
        sys.stderr.write(safe_json(json.dumps(error.problem(), ensure_ascii=False)) + "\n")
        sys.stderr.flush()
        return
    hint = getattr(error, "hint", None)
    if hint is None:
        print_error(error.sentence)
        return
    err = stderr_console()
    err.print(Text.assemble(("noemactl:", "bold red"), " error: ", error.sentence))
    err.print(Text(hint, style="dim"))
