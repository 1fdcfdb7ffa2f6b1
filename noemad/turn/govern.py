"""The governance step of a turn: between the draft and the emitted reply, whether the critic reviews it.

With governance enabled for the mind (`[governance]`, `[minds.NAME.governance]`)
and a `critic` model configured, each drafted reply passes
`noemad.governance`'s deterministic gate. The evidence it reads is the
turn's own, none of it invented: the messages answered (their intent: every
message of the turn's batch, so a question among them makes the reply an
answer, `answers_question`), the
tools the respond model called, the respond context and the memories the
cycle recalled and the mind's beliefs (for fabrication findings), and the
tags of the recalled memories (for `sensitive_tags`). Noema's confidence
reporter (with a `confidence_floor`) takes the confidence of the mind's
beliefs whose proposition the draft states, and withholds (None) when the
draft states none.

When the gate fires, the critic (role `critic`) reads the draft with the
context it answered; its last line is `APPROVE: reason` or `REVISE:
findings`, in capitals (anything else is no verdict). On REVISE the respond
model drafts once more with the findings, and that redraft passes governance
again; there is at most one revision. A critic that fails (an outage, no
verdict) fails open: the draft goes out, marked degraded.

Each pass is a `governance` event (`GovernanceRecord`), written before the
reply, caused by the message answered and citing the draft's model call
(and the critic's): the bounded status, the stable trigger category, whether
the critic was asked, its verdict. Never the draft, a finding, a tag's
payload or an exception: those stay in the critic's model-call record.

The statuses `invalid-signal` and `invalid-signal-degraded` belong to a
configured signal that answered badly (a reporter's NaN, a policy's
exception); the daemon's own reporter only ever gives a belief's confidence
(in [0, 1]) or None, so in the daemon they do not occur today. The library
shows them (`tests/test_governance.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import Clock, iso
from noemad.cognition.beliefs.model import normalise
from noemad.cognition.beliefs.queries import list_beliefs
from noemad.cognition.memory.reads import get_memory
from noemad.config.governance import GovernanceSettings
from noemad.config.mind import MindSettings
from noemad.config.schema import governance_settings
from noemad.errors import ModelError, NotFound
from noemad.events import Event, EventDraft, Ref, append, data_of, get_events
from noemad.governance import (
    STATUSES,
    batch_intent,
    ConfidenceOnlyMetacognitionPolicy,
    CriticGateContext,
    GovernanceCapability,
    GovernanceOutcome,
    GovernanceSubject,
    SelectiveMetacognitionPolicy,
    Status,
    TurnEvidence,
)
from noemad.models import Block, Conversation, ModelGateway, ModelResponse, Prompt, Turn
from noemad.store import Store
from noemad.wire import wire

log = logging.getLogger("noemad.governance")

ACTOR = "process:governance"
MAX_BELIEFS = 200  # the mind's most confident beliefs read as evidence

Verdict = Literal["approve", "revise"]

CRITIC_SYSTEM = (
    "You review a reply that {mind} drafted, before it is sent. Check it against the conversation and what {mind}"
    " recalled and believes: a number, name, date, link or promise that nothing there supports is a fabrication; a claim"
    " to have done something that was not done is one too. End with one line, in capitals as shown:\n"
    "APPROVE: <why it may go out>\n"
    "or\n"
    "REVISE: <what to fix>"
)


class NoVerdict(Exception):
    """The critic's last line was neither `APPROVE:` nor `REVISE:`; the turn fails open, degraded."""


def parse_verdict(text: str) -> tuple[Verdict, str]:
    """The critic's verdict from its last non-empty line, strictly: `APPROVE:` or `REVISE:` in capitals, then the reason."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    for prefix, verdict in (("APPROVE:", "approve"), ("REVISE:", "revise")):
        if last.startswith(prefix):
            reason = last[len(prefix) :].strip() or "\n".join(lines[:-1]).strip()
            return verdict, reason  # type: ignore[return-value]
    raise NoVerdict("the critic's last line is not APPROVE: or REVISE:")


@dataclass(frozen=True)
class GovernanceRecord:
    """The data of a `governance` event: one pass of a draft through the gate, bounded."""

    status: Status
    """reviewed, skipped, invalid-signal, degraded or invalid-signal-degraded."""
    trigger: str | None
    """The stable category that fired review (draft_claim, intent:action, ...); null when skipped."""
    reviewed: bool
    """Whether the critic was asked."""
    verdict: Verdict | None = None
    """approve or revise, when the critic gave a verdict."""
    revision: int = 0
    """0 for the first draft, 1 for the one redraft a REVISE asks for."""

    def to_data(self) -> dict[str, Any]:
        return {"status": self.status, "trigger": self.trigger, "reviewed": self.reviewed, "verdict": self.verdict, "revision": self.revision}

    @classmethod
    def of(cls, event: Event) -> GovernanceRecord:
        data = data_of(event, "governance")
        status = data.get("status")
        return cls(
            status if status in STATUSES else "degraded",
            data.get("trigger"),
            bool(data.get("reviewed")),
            data.get("verdict"),
            int(data.get("revision") or 0),
        )


@wire
@dataclass(frozen=True)
class GovernanceCounts:
    """A mind's governance passes since a time: by status, by trigger category, and the critic's firing rate."""

    passes: int
    """Drafts that passed the gate (a redraft counts again)."""
    fired: int
    """Of those, the ones the gate sent to the critic."""
    skipped: int
    statuses: dict[str, int]
    """Passes by status."""
    triggers: dict[str, int]
    """Fired passes by trigger category."""
    revised: int
    """REVISE verdicts (each asked for one redraft)."""
    firing_rate: float | None
    """fired / passes; null before the first pass."""
    off: str | None = None
    """Why the mind's drafts go out ungoverned now, when they do; null while governance runs."""


def governance_counts(db: Database, mind: str, since: float | None = None) -> GovernanceCounts:
    """The counts of `mind`'s governance events at or after `since` (all of them when None)."""
    statuses: dict[str, int] = {}
    triggers: dict[str, int] = {}
    revised = 0
    rows = db.execute(
        "SELECT id FROM events WHERE mind = ? AND kind = 'governance' AND at >= ? ORDER BY id",
        [mind, iso(since) if since is not None else ""],
    ).fetchall()
    for event in get_events(db, [r[0] for r in rows]).values():
        record = GovernanceRecord.of(event)
        statuses[record.status] = statuses.get(record.status, 0) + 1
        if record.status != "skipped" and record.trigger:
            triggers[record.trigger] = triggers.get(record.trigger, 0) + 1
        revised += record.verdict == "revise"
    passes = sum(statuses.values())
    skipped = statuses.get("skipped", 0)
    return GovernanceCounts(passes, passes - skipped, skipped, statuses, triggers, revised, (passes - skipped) / passes if passes else None)


@dataclass
class _Critic:
    """The reflector: one critic call over the draft and its context; remembers its model call for the event."""

    gateway: ModelGateway
    mind: str
    context: Prompt
    calls: list[int] = field(default_factory=list)

    async def __call__(self, subject: GovernanceSubject, gate: CriticGateContext) -> tuple[Verdict, str]:
        conversation = "\n".join(
            f"{turn.role}: {block.text}" for turn in self.context.messages for block in turn.content if isinstance(block, Block)
        )
        findings = "; ".join(f"{f.kind} {f.text}" for f in gate.fabrication_findings) or "none"
        ask = (
            f"The conversation so far:\n{conversation}\n\nWhat {self.mind} recalled and believes:\n"
            f"{subject.properties.get('knowledge') or '(nothing)'}\n\nClaims of the draft nothing above supports: {findings}\n\n"
            f"The draft reply:\n{subject.draft}"
        )
        prompt = Prompt(role="critic", mind=self.mind, system=(Block(CRITIC_SYSTEM.format(mind=self.mind)),), messages=(Turn.user(ask),))
        try:
            answer = await self.gateway.complete(prompt)
        except ModelError as exc:
            if exc.call_id is not None:
                self.calls.append(exc.call_id)
            raise
        if answer.call_id is not None:
            self.calls.append(answer.call_id)
        return parse_verdict(answer.text)


class BeliefConfidence:
    """Noema's confidence reporter: the least confidence of the mind's beliefs whose proposition the draft states; None if none."""

    def __init__(self, beliefs: Sequence[tuple[str, float]]) -> None:
        self.beliefs = beliefs

    def confidence(self, subject: GovernanceSubject, context: CriticGateContext) -> float | None:
        draft = normalise(subject.draft)
        stated = [conf for proposition, conf in self.beliefs if proposition and proposition in draft]
        return min(stated) if stated else None


def settings_for(gateway: ModelGateway, mind: str, settings: MindSettings) -> GovernanceSettings | None:
    """The mind's governance settings when its drafts are governed (enabled, and a critic model), else None."""
    return None if why_off(gateway, mind, settings) else governance_settings(gateway.config(), settings)


def why_off(gateway: ModelGateway, mind: str, settings: MindSettings) -> str | None:
    """Why `mind`'s drafts go out without the governance gate, or None when they pass it."""
    if not governance_settings(gateway.config(), settings).enabled:
        return "disabled for this mind ([governance] enabled = false); drafts go out unreviewed"
    if not gateway.configured(mind, "critic"):
        return "no critic model is configured ([models.critic]); drafts go out unreviewed"
    return None


def _evidence(db: Database, mind: str, recalled: Event | None) -> tuple[list[str], list[str], list[tuple[str, float]]]:
    """The recalled memories' texts and tags, and the mind's beliefs (proposition, confidence)."""
    texts: list[str] = []
    tags: list[str] = []
    for ref in recalled.refs if recalled is not None else []:
        if ref.type != "memory":
            continue
        try:
            memory = get_memory(db, ref.id)
        except NotFound:
            continue
        texts.append(memory.text)
        tags += memory.tags
    beliefs = [(normalise(b.proposition), b.confidence) for b in list_beliefs(db, mind, limit=MAX_BELIEFS) if b.status != "rejected"]
    return texts, tags, beliefs


def _event(mind: str, answered: Event, cycle_id: str, record: GovernanceRecord, calls: Sequence[int]) -> EventDraft:
    trigger = f" {record.trigger}" if record.trigger else ""
    return EventDraft(
        mind=mind,
        kind="governance",
        actor=ACTOR,
        channel=answered.channel,
        cycle_id=cycle_id,
        causation_id=answered.id,
        refs=[Ref("model_call", c) for c in dict.fromkeys(calls)],
        text=f"metacognition[{record.status}]{trigger}" + (f" {record.verdict}" if record.verdict else ""),
        data=record.to_data(),
    )


async def _pass(
    capability: GovernanceCapability, draft: ModelResponse, knowledge: str, turn: TurnEvidence
) -> GovernanceOutcome:
    subject = GovernanceSubject(draft.text, {"knowledge": knowledge})
    return await capability.govern(subject, turn)


async def govern_reply(
    store: Store,
    clock: Clock,
    gateway: ModelGateway,
    mind: str,
    settings: MindSettings,
    answered: Event,
    cycle_id: str,
    context: Prompt,
    drafted: Conversation,
    recalled: Event | None,
    asked: Sequence[str] = (),
) -> Conversation:
    """Pass `drafted` through governance (see the module); what goes out: the draft, or its one redraft.

    `asked` is the text of every message the reply answers (a batch may hold several; `answered` is its newest):
    the gate reads them all, so a question earlier in the batch makes the reply an answer.
    """
    chosen = settings_for(gateway, mind, settings)
    final = drafted.final
    if chosen is None or final is None or not final.text.strip():
        return drafted
    texts, tags, beliefs = _evidence(store.reader(), mind, recalled)
    critic = _Critic(gateway, mind, context)
    capability = GovernanceCapability.compose(
        reflector=critic,
        sensitive_terms=chosen.sensitive_terms,
        sensitive_tags=chosen.sensitive_tags,
        confidence_floor=chosen.confidence_floor,
        confidence=BeliefConfidence(beliefs) if chosen.confidence_floor is not None else None,
        trigger_policy=ConfidenceOnlyMetacognitionPolicy() if chosen.policy == "confidence_only" else SelectiveMetacognitionPolicy(),
        read_only_tools=chosen.read_only_tools,
        trivial_ack_patterns=chosen.trivial_ack_patterns,
    )
    window = [b.text for t in context.messages for b in t.content if isinstance(b, Block)]
    knowledge = "\n".join([*texts, *(p for p, _ in beliefs)])
    turn = TurnEvidence(
        message=answered.text or "",
        intent_verdict=batch_intent(asked) if asked else None,
        tool_calls=tuple(use.name for response in drafted.responses for use in response.tool_uses),
        evidence=(*window, *texts, *(p for p, _ in beliefs)),
        recalled_tags=tuple(tags),
        scope=mind,
        run_id=cycle_id,
    )
    outcome = await _pass(capability, final, knowledge, turn)
    await _record(store, clock, mind, answered, cycle_id, outcome, [*drafted.call_ids[-1:], *critic.calls], 0)
    if not (outcome.review and outcome.review[0] == "revise"):
        return drafted
    findings = outcome.review[1] or "the reviewer found claims nothing supports"
    redraft_prompt = Prompt(
        role="respond",
        mind=mind,
        system=context.system,
        messages=(
            *context.messages,
            Turn("assistant", (Block(final.text),)),
            Turn.user(f"A reviewer read that reply before it was sent and asks you to revise it: {findings}\nWrite the reply again; only the reply."),
        ),
    )
    try:
        redraft = await gateway.complete(redraft_prompt)
    except ModelError as exc:  # fail open: the first draft goes out
        log.warning("mind %s could not redraft after review: %s", mind, exc.detail)
        failed = GovernanceRecord("degraded", outcome.trigger, False, None, 1)
        calls = [exc.call_id] if exc.call_id is not None else []
        await store.writer.run(lambda db: append(db, _event(mind, answered, cycle_id, failed, calls), clock.now()))
        return drafted
    critic.calls.clear()
    second = await _pass(capability, redraft, knowledge, turn)
    await _record(store, clock, mind, answered, cycle_id, second, [*([redraft.call_id] if redraft.call_id else []), *critic.calls], 1)
    return Conversation((*drafted.responses, redraft))


async def _record(
    store: Store, clock: Clock, mind: str, answered: Event, cycle_id: str, outcome: GovernanceOutcome, calls: list[int], revision: int
) -> Event:
    verdict = outcome.review[0] if isinstance(outcome.review, tuple) else None
    record = GovernanceRecord(outcome.status, outcome.trigger, outcome.reflector_attempted, verdict, revision)
    if outcome.error is not None:
        log.warning("mind %s: the critic failed (%s); the draft goes out unreviewed", mind, type(outcome.error).__name__)
    return await store.writer.run(lambda db: append(db, _event(mind, answered, cycle_id, record, calls), clock.now()))
