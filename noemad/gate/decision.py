"""What the gate decides for one stimulus.

Wake rules, batching and the reply judge come later; until then every
stimulus wakes its mind, and this function is the seam where they will decide.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from noemad.events import Event


class Action(enum.Enum):
    """What happens to the mind when a stimulus arrives."""

    WAKE = "wake"  # run a turn now over everything new
    BATCH = "batch"  # run a turn later, with whatever else arrives
    DEFER = "defer"  # keep it in context; do not wake for it


@dataclass(frozen=True)
class Decision:
    """The gate's answer and the reason it gives."""

    action: Action
    reason: str


def decide(stimulus: Event) -> Decision:
    """Decide for one stored stimulus."""
    return Decision(Action.WAKE, "every stimulus wakes the mind (no wake rules yet)")
