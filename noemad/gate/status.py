"""What `GET /api/v1/minds/{mind}/gate` and `noemactl gate-status` show: a mind's gate now.

`Gate.status(now)` builds these from its rules' state; the dataclasses are
the one definition of that JSON (`@wire`). Counters are kept in memory and
count from `since` (when the daemon started the mind's gate); what survives
a restart (the rules, a sleep, the self-wake) is stored and shown again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from noemad.turn.govern import GovernanceCounts
from noemad.wire import OMIT_NONE, IsoTime, wire


@wire
@dataclass(frozen=True)
class Bucket:
    """A rate_limit rule's token bucket for one key."""

    key: str
    """The channel or author it counts for; empty when the rule keys by nothing (one bucket for all)."""
    tokens: float
    """Tokens left now (a part-token is on its way back); a stimulus that finds one wakes the mind."""


@wire
@dataclass(frozen=True)
class Sampled:
    """A passive_sample rule's counts since `since`."""

    seen: int
    """Stimuli the rule sampled from."""
    woke: int
    """Of those, the ones that woke the mind (the 1st, every+1th, ... per key)."""


@wire
@dataclass(frozen=True)
class JudgeVerdictStatus:
    """A judge rule's newest verdict, with the judge's reason (kept here and in the model call, not in the event)."""

    at: IsoTime
    verdict: str
    """reply, wait, failed (an error, a timeout, no verdict) or refused (a hold, a pause, a budget: judged again later)."""
    reason: str
    woke: bool
    superseded: bool
    """A REPLY a turn overtook: judged again after it, not a wake."""
    input_tokens: int
    """Input of its call: uncached, cache read and cache write together."""
    cache_read: int
    output_tokens: int
    call: int | None
    """The model call (ledger row) that answered."""


@wire
@dataclass(frozen=True)
class JudgeRuleStatus:
    """A judge rule's judging since `since`: verdict counts, the newest verdict, what waits, tokens and notices."""

    verdicts: dict[str, int]
    """reply, wait, failed, refused, superseded."""
    last: JudgeVerdictStatus | None
    judging: int
    """Stimuli in the batch its judge is deciding on now."""
    held: int
    """Stimuli waiting for a judge call (a turn or a pause is on, or calls are refused)."""
    queued: int
    """Stimuli that came due while its judge decided: they go with a REPLY, or are judged afresh after a WAIT."""
    unanswered: int
    """Stimuli of a REPLY whose turn failed: folded into the next judged batch until a turn completes."""
    dropped: int
    """Stimuli dropped from what it held or queued past the cap of 100 (still stored and in context)."""
    refused_until: IsoTime | None
    input_tokens: int
    output_tokens: int
    cache_share: float | None
    """Of the input tokens, the share read from the prompt cache."""
    ratio: float | None
    """The calibrated characters per token of the judge's window for this mind (null until calibrated)."""
    notices: list[str]
    """Unwired (runs as a debounce), failed 3 in a row, refused until T, budget read at its least."""


@wire
@dataclass(frozen=True)
class RuleStatus:
    """One wake rule, in the order the rules are asked, with its state and counters."""

    name: str
    behaviour: dict[str, Any]
    """The behaviour as its one-key object, e.g. {"debounce": {"ms": 2000}}."""
    match: dict[str, Any]
    """What it matches, every field present (null or empty: any)."""
    passthrough: bool
    resets: list[str]
    matches: int
    """Stimuli it matched since `since` (a passthrough rule that let a stimulus on counts it too)."""
    last_match: IsoTime | None
    pending: int
    """Stimuli in its debounce batch, waiting for the quiet period to end."""
    next_delivery: IsoTime | None
    """When its batch wakes the mind if nothing new pushes it back."""
    buckets: list[Bucket]
    denials: int
    """Stimuli it denied (rate_limit with no token, passive_sample not sampled): stored, in context, no turn."""
    sampled: Sampled
    judge: Annotated[JudgeRuleStatus | None, OMIT_NONE] = None
    """A judge rule's judging; absent for other behaviours."""


@wire
@dataclass(frozen=True)
class SleepStatus:
    """The mind sleeps: stimuli are stored and reach no rule; privileged authors still wake it."""

    until: IsoTime
    note: str | None


@wire
@dataclass(frozen=True)
class SelfWakeStatus:
    """The mind's own timer (its skip_reply): a turn with nothing new at `at`, unless a turn starts first."""

    at: IsoTime
    cause: int
    """The self_wake_set event that set it."""


@wire
@dataclass(frozen=True)
class UpcomingWake:
    """Something that will wake the mind with no new stimulus (what the reply judge will be told about)."""

    at: IsoTime
    what: str
    """In words: "a debounce batch of 3", "its own self-wake", "the end of its sleep"."""
    rule: str | None = None
    """The rule whose batch it is."""
    maybe: bool = False
    """A wake that may not happen (a judge rule's batch: its judge may say WAIT)."""


@wire
@dataclass(frozen=True)
class ConnectorBrief:
    """One connector of the mind, in brief (`noemactl connectors` has the rest): where its stimuli come from, whether its replies go out."""

    key: str
    phase: str
    """starting, connected, syncing, backing_off, stopped."""
    pending: int
    """Deliveries waiting in its outbox."""
    given_up: int
    """Deliveries given up."""
    why: Annotated[str | None, OMIT_NONE] = None
    """Why it backs off, or stopped."""


@wire
@dataclass(frozen=True)
class GateStatus:
    """A mind's gate now: its rules and their state, sleep, self-wake, upcoming wakes, and what it held back."""

    mind: str
    default: dict[str, Any]
    """What a stimulus no rule matches does, e.g. {"always": {}}."""
    rules: list[RuleStatus]
    sleeping: SleepStatus | None
    self_wake: SelfWakeStatus | None
    upcoming: list[UpcomingWake]
    """Soonest first."""
    held: int
    """Stimuli in deliveries held while a turn runs or the mind is paused (at most 100)."""
    dropped: int
    """Stimuli dropped from held deliveries past the cap of 100, oldest first (still stored and in context)."""
    absorbed: int
    """Batches a turn took every stimulus of before they were due: they woke nothing."""
    errors: list[str]
    """Stored rules left out because they no longer read, each with why."""
    notes: list[str]
    """Bounds read at their nearest value."""
    warnings: list[str]
    """Rules that would swallow DMs or mentions ahead of the rules that handle them."""
    since: IsoTime
    """When these counters started (the gate started with the daemon)."""
    governance: GovernanceCounts | None = None
    """The governance gate's passes on the mind's drafts since `since`: fired and skipped, by status and trigger."""
    connectors: list[ConnectorBrief] = field(default_factory=list)
    """The mind's connectors ([[minds.NAME.connectors]]): their state and outboxes."""
