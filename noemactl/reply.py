"""`noemactl say --wait`: the mind's reply to a message once its turn ends, or why there is none.

Read from the mind's event stream, replayed from the message on (so nothing
is missed however fast the turn is): the `cycle_started` citing the message
names the turn, and that turn's `reply`, `reply_skipped` or `reply_failed`
ends the wait; `turn_failed` naming the message, or a `judge_verdict` over
it that did not wake the mind, ends it too. What the gate said at once
(deferred, denied, asleep, batched) comes with the ingest answer (`gate`);
from a noemad whose answer lacks it, from `GET /events/{id}/turn`.
"""

from __future__ import annotations

import time
from typing import Any

from noemactl.client import StreamIdle
from noemactl.errors import CtlError
from noemactl.session import Session

HELD = {
    "defer": "deferred by {rule}: stored and in context, but it wakes no turn",
    "deny": "denied by {rule} (rate limit or sampling): stored and in context, but it wakes no turn",
    "asleep": "the mind is asleep: stored, and taken by the turn after it wakes",
}


def _rule(rule: str | None) -> str:
    return f"rule {rule}" if rule else "the mind's default"


class Outcome:
    """How the wait ended: the reply's text, or why there is none (and whether that is a failure)."""

    def __init__(self, reply: dict[str, Any] | None, why: str | None, failed: bool = False) -> None:
        self.reply, self.why, self.failed = reply, why, failed


def cites(event: dict[str, Any], stimulus: int) -> bool:
    """Whether `event` names `stimulus` among its parents or cites it (a batch's turn cites what it took along)."""
    return stimulus in event.get("parents", ()) or any(r["type"] == "event" and r["id"] == stimulus for r in event.get("refs", ()))


def _decided(gate: dict[str, Any]) -> dict[str, Any]:
    """The ingest answer's `gate` as the state `GET /events/{id}/turn` gives: just stored, so still waiting."""
    verdict = gate.get("verdict")
    return {
        "waiting": True,
        "verdict": None if verdict == "wake" else verdict,
        "rule": gate.get("rule"),
        "paused": bool(gate.get("paused")),
        "respond_model": bool(gate.get("respond_model")),
    }


def wait(s: Session, mind: str, stimulus: int, timeout: float, gate: dict[str, Any] | None = None) -> Outcome:
    """Wait up to `timeout` seconds (this machine's) for the turn that takes `stimulus` to end.

    `gate`: the gate's decision from the ingest answer; without it, noemad is asked where the stimulus is.
    """
    deadline = time.monotonic() + timeout
    cycle: str | None = None
    try:
        with s.client.stream(mind, stimulus, idle=timeout) as messages:  # subscribed (and replaying) before the state is read
            state = _decided(gate) if gate is not None else s.client.stimulus_turn(stimulus)
            if state["waiting"] and state["verdict"] in HELD:
                return Outcome(None, HELD[state["verdict"]].format(rule=_rule(state["rule"])))
            if state["waiting"] and state["verdict"] == "batch":
                s.output.note(f"batched by {_rule(state['rule'])}: waiting for the batch's turn")
            if state["paused"]:
                s.output.note(f"{mind} is paused: its turn runs when it is resumed (noemactl resume {mind})")
            for message in messages:
                if message.is_end:
                    return Outcome(None, f"the stream ended: {(message.json() or {}).get('reason', 'noemad ended it')}", failed=True)
                event = message.json()
                if isinstance(event, dict):
                    if cycle is None and event.get("kind") == "cycle_started" and cites(event, stimulus):
                        cycle = event["cycle_id"]
                    done = _ends(event, mind, stimulus, cycle, state["respond_model"])
                    if done is not None:
                        return done
                if time.monotonic() >= deadline:
                    break
    except StreamIdle:
        pass  # no event for the whole timeout
    what = "its turn has not ended" if cycle else "no turn has taken it"
    raise CtlError(f"no reply within {timeout:g} s: {what}; see what happened with `noemactl events {mind} --since {stimulus}`")


def _ends(event: dict[str, Any], mind: str, stimulus: int, cycle: str | None, respond_model: bool) -> Outcome | None:
    kind = event.get("kind")
    if cycle is not None and event.get("cycle_id") == cycle:
        if kind == "reply":
            return Outcome(event, None)
        if kind == "reply_skipped":
            return Outcome(None, f"the mind chose not to reply ({event.get('text')})")
        if kind == "reply_failed":
            detail = (event.get("data") or {}).get("detail") or "the respond model failed"
            return Outcome(None, f"drafting the reply failed: {detail}", failed=True)
        if kind == "cycle_completed" and not respond_model:
            return Outcome(None, "the mind has no respond model, so its turns draft no reply (set [models.respond] in noemad.toml)")
    if kind == "turn_failed" and stimulus in (event.get("data") or {}).get("stimuli", ()):
        return Outcome(None, f"the turn failed: {event.get('text')}", failed=True)
    if kind == "judge_verdict" and cites(event, stimulus):
        data = event.get("data") or {}
        # WAIT, or a failed call that did not wake the mind, is the end; a refusal or a superseded REPLY is judged again.
        if data.get("verdict") in ("wait", "failed") and not data.get("woke") and not data.get("superseded"):
            # The judge's reason is not in the event (it may repeat what participants said): gate-status shows it.
            return Outcome(None, f"{event.get('text')}; see why with `noemactl gate-status {mind}`")
    return None
