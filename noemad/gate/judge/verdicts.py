"""The `judge_verdict` event: each verdict of a judge rule on the mind's timeline.

One event per verdict (reply, wait, failed, refused; a REPLY a turn overtook
is traced with `woke: false` and `superseded: true`), its parents the judged
batch (the newest MAX_LINKS), citing the model call that answered, with its
tokens. The judge's reason is not in the event: it is kept in gate-status
and in the model call, so a participant's words the judge repeated do not
land in the timeline's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from noemad.clock import iso, parse_iso
from noemad.events import MAX_LINKS, Event, EventDraft, Ref, append, data_of
from noemad.gate.judge.slot import VerdictRecord

ACTOR = "judge"


@dataclass(frozen=True)
class JudgeVerdict:
    """The data of a `judge_verdict` event."""

    rule: str
    verdict: str  # reply, wait, failed, refused
    woke: bool
    stimuli: int  # in the judged batch (the parents name the newest MAX_LINKS)
    superseded: bool = False
    call: int | None = None  # the model call (also a ref)
    input_tokens: int = 0  # uncached
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    refused_until: float | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rule": self.rule,
            "verdict": self.verdict,
            "woke": self.woke,
            "stimuli": self.stimuli,
            "superseded": self.superseded,
            "call": self.call,
            "input_tokens": self.input_tokens,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "output_tokens": self.output_tokens,
        }
        if self.refused_until is not None:
            data["refused_until"] = iso(self.refused_until)
        return data

    @classmethod
    def of(cls, event: Event) -> JudgeVerdict:
        data = data_of(event, "judge_verdict")
        until = data.get("refused_until")
        return cls(
            rule=str(data["rule"]),
            verdict=str(data["verdict"]),
            woke=bool(data["woke"]),
            stimuli=int(data.get("stimuli", 0)),
            superseded=bool(data.get("superseded", False)),
            call=data.get("call"),
            input_tokens=int(data.get("input_tokens", 0)),
            cache_read=int(data.get("cache_read", 0)),
            cache_write=int(data.get("cache_write", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            refused_until=parse_iso(until) if until else None,
        )

    @classmethod
    def from_record(cls, record: VerdictRecord) -> JudgeVerdict:
        return cls(
            record.rule, record.verdict, record.woke, len(record.stimuli), record.superseded, record.call_id,
            record.input_tokens, record.cache_read, record.cache_write, record.output_tokens, record.refused_until,
        )


def _text(verdict: JudgeVerdict) -> str:
    batch = f"{verdict.stimuli} stimulus" if verdict.stimuli == 1 else f"{verdict.stimuli} stimuli"
    if verdict.superseded:
        return f"rule {verdict.rule}: the judge said REPLY to {batch}, overtaken by a turn; judged again after it"
    if verdict.verdict == "refused":
        until = f" until {iso(verdict.refused_until)}" if verdict.refused_until is not None else ""
        return f"rule {verdict.rule}: the judge call was refused{until}; {batch} held, judged when it ends"
    said = {"reply": "REPLY", "wait": "WAIT", "failed": "no verdict (failed)"}[verdict.verdict]
    woke = "woke the mind" if verdict.woke else "did not wake the mind"
    return f"rule {verdict.rule}: the judge said {said} to {batch}; it {woke}"


def record_verdict(db: Database, mind: str, record: VerdictRecord, now: float) -> Event:
    """Append the `judge_verdict` of one verdict (a writer job)."""
    verdict = JudgeVerdict.from_record(record)
    parents = list(record.stimuli[-MAX_LINKS:])
    return append(
        db,
        EventDraft(
            mind=mind,
            kind="judge_verdict",
            actor=ACTOR,
            text=_text(verdict),
            data=verdict.to_data(),
            causation_id=parents[-1] if parents else None,
            parents=parents,
            refs=[Ref("model_call", record.call_id)] if record.call_id is not None else [],
        ),
        now,
    )
