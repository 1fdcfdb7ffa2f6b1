"""`--watch` for the commands that show a state (`gate-status`, `status`): look again and again until Ctrl-C.

On a terminal the view is redrawn in place; piped, the first look is printed
whole and then only the lines that changed (JSON Lines of each changed
answer with --json), so a log of the output reads as what happened.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from noemactl.errors import BadInput

if TYPE_CHECKING:
    from rich.console import RenderableType

    from noemactl.session import Session

INTERVAL = 1.0  # seconds between looks
WATCH_HELP = "Keep looking until Ctrl-C: redrawn on a terminal; piped, each changed line is printed (JSON Lines with --json)."


def parse_interval(interval: str) -> float:
    """`--interval` in seconds, or `BadInput` that says what to write."""
    try:
        every = float(interval)
    except ValueError:
        raise BadInput(f"--interval {interval!r} is not a number of seconds; write it like 1 or 0.5") from None
    if not 0.05 <= every <= 3600:
        raise BadInput(f"--interval {interval} is out of range; give 0.05 to 3600 seconds")
    return every


def plain_lines(renderables: Sequence[RenderableType]) -> list[str]:
    """A view as plain lines, to compare one look with the last."""
    from rich.text import Text

    return [r.plain.rstrip() if isinstance(r, Text) else str(r) for r in renderables]


def watch(
    s: Session,
    look: Callable[[], Any],
    render: Callable[[Any], Sequence[RenderableType]],
    every: float,
    count: int | None,
    as_json: bool,
) -> None:
    """Call `look` every `every` seconds (at most `count` times) and show what `render` makes of it."""
    looks = 0

    def again() -> Any:
        nonlocal looks
        looks += 1
        return look()

    def more() -> bool:
        return count is None or looks < count

    try:
        if s.output.terminal and not as_json:
            from rich.console import Group
            from rich.live import Live

            with Live(Group(*render(again())), console=s.output.out, auto_refresh=False) as live:
                while more():
                    time.sleep(every)
                    live.update(Group(*render(again())), refresh=True)
            return
        shown: list[str] = []
        last: Any = None
        while True:
            data = again()
            if as_json:
                if data != last:
                    s.output.json_line(data)
                last = data
            else:
                lines = plain_lines(render(data))
                fresh = [line for line in lines if line not in shown] if shown else lines
                for line in fresh:
                    sys.stdout.write(line + "\n")
                sys.stdout.flush()
                shown = lines
            if not more():
                return
            time.sleep(every)
    except KeyboardInterrupt:
        return
