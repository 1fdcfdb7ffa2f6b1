"""What plays a demo scenario into its mind: `Player` sends stimuli, waits for the mind's turns, reads back what it concluded, and narrates.

Used by the scenarios in `noemactl.demo_scenarios`; `noemactl demo` makes one
Player per scenario. Nothing here decides anything: every conclusion it reads
is the daemon's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from noemactl.errors import CtlError

if TYPE_CHECKING:
    from noemactl.session import Session

POLL = 0.05  # seconds between looks for the end of a turn
TURN_TIMEOUT = 60.0  # seconds a turn may take before the demo gives up


@dataclass(frozen=True)
class Turn:
    """A turn the demo waited for: its cycle_started event and, from a mind that drafts, what ended its reply."""

    started: dict[str, Any]
    reply: dict[str, Any] | None  # the reply, reply_skipped or reply_failed event; None from a mind with no respond model


@dataclass
class Player:
    """Plays one scenario into one mind and collects what it shows."""

    s: Session
    mind: str
    as_json: bool
    manual_clock: bool = False  # a test daemon's clock: the demo moves it (`after`)
    drafts: bool = False  # the mind has a respond model: its turns end with a reply
    said: list[str] = field(default_factory=list)
    found: dict[str, Any] = field(default_factory=dict)

    # narration -------------------------------------------------------------

    def say(self, text: str) -> None:
        """A line of narration (stdout, unless --json)."""
        self.said.append(text)
        if not self.as_json:
            self.s.output.show(text)

    def explore(self, *commands: str) -> None:
        """Commands to look further."""
        for command in commands:
            self.say(f"    $ {command}")

    # stimuli ---------------------------------------------------------------

    def send(self, body: dict[str, Any]) -> dict[str, Any]:
        """Store a stimulus, wait for the turn that takes it, return the stored event."""
        event = self.s.client.ingest(self.mind, body)
        self.settle(event["id"])
        return event

    def settle(self, stimulus: int) -> dict[str, Any]:
        """Wait until the cycle that took `stimulus` has completed; its cycle_completed event."""
        return self._completed(self._started(stimulus), stimulus)

    def turn(self, stimulus: int) -> Turn:
        """Wait for the turn that takes `stimulus` to end, its reply included when the mind drafts one."""
        started = self._started(stimulus)
        self._completed(started, stimulus)
        reply = None
        if self.drafts:
            reply = self.first(
                ("reply", "reply_skipped", "reply_failed"),
                started["id"],
                lambda e: e["cycle_id"] == started["cycle_id"],
                f"the turn over event {stimulus} sent no reply",
            )
        return Turn(started, reply)

    def _started(self, stimulus: int) -> dict[str, Any]:
        from noemactl.reply import cites  # imported here: shell completion reads NAMES without httpx

        return self.first(("cycle_started",), stimulus, lambda e: cites(e, stimulus), f"no turn took event {stimulus}")

    def _completed(self, started: dict[str, Any], stimulus: int) -> dict[str, Any]:
        cycle = started["cycle_id"]
        return self.first(("cycle_completed",), started["id"], lambda e: e["cycle_id"] == cycle, f"the turn over event {stimulus} did not finish")

    def first(self, kinds: Sequence[str], since: int, wanted: Callable[[dict[str, Any]], bool], missing: str) -> dict[str, Any]:
        """The first of the mind's events of `kinds` after `since` that is `wanted`, looked for until TURN_TIMEOUT."""
        deadline = time.monotonic() + TURN_TIMEOUT
        while True:
            events: list[dict[str, Any]] = self.s.client.events(self.mind, list(kinds), since, 1000)["events"]
            for event in events:
                if wanted(event):
                    return event
                since = max(since, event["id"])
            if time.monotonic() >= deadline:
                raise CtlError(f"mind {self.mind}: {missing} within {TURN_TIMEOUT:.0f}s; see `noemactl events {self.mind}`")
            time.sleep(POLL)

    def after(self, seconds: float) -> None:
        """Let `seconds` pass on the daemon's clock: a manual clock is moved; the system clock passes while `first` looks."""
        if self.manual_clock:
            self.s.client.advance_clock(seconds)

    def message(self, author: str, text: str, channel: str, *, dm: bool = False, mentions: Sequence[str] = ()) -> dict[str, Any]:
        """Store a message as a connector would (`noemactl say`), without waiting; the stored event."""
        body: dict[str, Any] = {"kind": "message", "author": author, "channel": channel, "text": text, "mentions": list(mentions)}
        if dm:
            body["dm"] = True
        return self.s.client.ingest(self.mind, body)

    def gate(self) -> dict[str, Any]:
        """The mind's gate-status, as `noemactl gate-status MIND --json` prints it."""
        return self.s.client.gate(self.mind)

    def show_gate(self, data: dict[str, Any]) -> None:
        """The human gate-status view, as `noemactl gate-status MIND` prints it."""
        from noemactl import gate_view

        if not self.as_json:
            self.s.output.show(*gate_view.gate(data))

    def events(self, *kinds: str, since: int = 0) -> list[dict[str, Any]]:
        """The mind's events of `kinds` after `since` (one page of up to 1000)."""
        events: list[dict[str, Any]] = self.s.client.events(self.mind, list(kinds), since, 1000)["events"]
        return events

    def job(self, kind: str) -> dict[str, Any]:
        """Run reflection or consolidation now and follow it to its end."""
        from noemactl.jobs import follow

        job = follow(self.s, self.s.client.run_job(self.mind, kind))
        if job["status"] != "succeeded":
            raise CtlError(f"the demo's {kind} job {job['id']} failed: {job['error']}")
        return job
