"""The governance capability: composition refusals, the confidence port's four rules, the policies and the five statuses."""

from __future__ import annotations

import math
from typing import Any

import pytest

from noemad.errors import GovernanceRefused
from noemad.governance import (
    STATUSES,
    ConfidenceOnlyMetacognitionPolicy,
    CriticGateContext,
    GovernanceCapability,
    GovernanceSubject,
    SelectiveMetacognitionPolicy,
    TurnEvidence,
)

pytestmark = pytest.mark.anyio

ACK = GovernanceSubject("Got it, thanks!")
CHAT = TurnEvidence(message="Thanks for the update")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Critic:
    """A reflector that records what it was asked and answers, or fails."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[CriticGateContext] = []

    async def __call__(self, subject: GovernanceSubject, context: CriticGateContext) -> str:
        self.seen.append(context)
        if self.fail:
            raise ConnectionError("critic down")
        return "APPROVE: fine"


class Reporter:
    def __init__(self, value: Any) -> None:
        self.value = value
        self.asked = 0

    def confidence(self, subject: GovernanceSubject, context: CriticGateContext) -> Any:
        self.asked += 1
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


# --- the default policy: hard floors and the ack skip -----------------------------------


@pytest.mark.parametrize(
    ("draft", "turn", "trigger"),
    [
        ("Got it, thanks!", TurnEvidence(message="Please send the report"), "intent:action"),
        ("Got it, thanks!", TurnEvidence(message="明天见"), "intent:ambiguous"),
        ("Got it, thanks!", TurnEvidence(message="thanks", tool_calls=("send_email",)), "mutating_tool"),
        ("Got it, 3 left.", CHAT, "draft_claim"),
        ("Got it, thanks!", TurnEvidence(message="thanks", fabrication_findings=()), None),
        ("Sent it to Bob.", TurnEvidence(message="thanks", evidence=("alice",)), "fabrication_finding"),
        ("I think the plan is sound", CHAT, "not_trivial_ack"),
        ("Tack så mycket!", CHAT, "not_trivial_ack"),
    ],
)
def test_the_selective_policy_keeps_every_hard_floor(draft: str, turn: TurnEvidence, trigger: str | None) -> None:
    decision = GovernanceCapability.compose().decide(GovernanceSubject(draft), turn)
    assert decision.trigger == trigger
    assert decision.fire is (trigger is not None)


def test_a_read_only_tool_does_not_fire_but_its_quoted_numbers_do() -> None:
    capability = GovernanceCapability.compose(read_only_tools=["search"])
    read = TurnEvidence(message="thanks", tool_calls=("search",))
    assert not capability.decide(ACK, read).fire
    assert capability.decide(GovernanceSubject("Found it: 42 results."), read).trigger == "draft_claim"
    assert capability.decide(ACK, TurnEvidence(message="thanks", tool_calls=("search", "delete"))).trigger == "mutating_tool"


def test_sensitive_terms_and_recalled_tags_fire_with_stable_categories() -> None:
    capability = GovernanceCapability.compose(sensitive_terms=["jurisdiccion"], sensitive_tags=["legal", "medical"])
    hit = capability.decide(GovernanceSubject("Vale, la jurisdicción, gracias"), CHAT)
    assert hit.trigger == "sensitive_term" and hit.context.sensitive_hit == "jurisdiccion"
    tagged = capability.decide(ACK, TurnEvidence(message="thanks", recalled_tags=("legal", "travel")))
    assert tagged.trigger == "recalled_sensitive_tag:legal"
    assert not capability.decide(ACK, TurnEvidence(message="thanks", recalled_tags=("travel",))).fire
    # The draft naming a tag is not recall evidence.
    assert not capability.decide(GovernanceSubject("Got it, legal, thanks"), CHAT).context.recalled_sensitive_tags


def test_the_confidence_only_policy_drops_the_floors_and_says_so() -> None:
    capability = GovernanceCapability.compose(trigger_policy=ConfidenceOnlyMetacognitionPolicy(), confidence_floor=0.6)
    assert not capability.selective
    claim = GovernanceSubject("The invoice is $1,200.")
    assert not capability.decide(claim, TurnEvidence(message="Please pay it")).fire  # no confidence: nothing fires
    low = GovernanceSubject("The invoice is $1,200.", confidence=0.5)
    assert capability.decide(low, CHAT).trigger == "confidence_below_floor"


# --- the confidence port's four rules --------------------------------------------------


def test_the_subject_wins_over_the_reporter() -> None:
    reporter = Reporter(0.1)
    capability = GovernanceCapability.compose(confidence=reporter, confidence_floor=0.7)
    decision = capability.decide(GovernanceSubject("Got it, thanks!", confidence=0.9), CHAT)
    assert reporter.asked == 0 and not decision.fire and decision.context.confidence == 0.9
    assert capability.decide(ACK, CHAT).trigger == "confidence_below_floor" and reporter.asked == 1


def test_none_withholds() -> None:
    capability = GovernanceCapability.compose(confidence=Reporter(None), confidence_floor=0.7)
    assert not capability.decide(ACK, CHAT).fire
    assert capability.decide(GovernanceSubject("Got it, 3 done"), CHAT).trigger == "draft_claim"


class NoMethod:
    pass


class WrongArity:
    def confidence(self, subject: Any) -> float:
        return 0.5


class AsyncMethod:
    async def confidence(self, subject: Any, context: Any) -> float:
        return 0.5


class AsyncCallable:
    def confidence(self, subject: Any, context: Any) -> float:
        return 0.5

    async def __call__(self, subject: Any, context: Any) -> float:
        return 0.5


class NotCallable:
    confidence = 0.5


@pytest.mark.parametrize(
    ("reporter", "says"),
    [
        (NoMethod(), "has no confidence"),
        (NotCallable(), "has no confidence"),
        (WrongArity(), "must take two arguments"),
        (AsyncMethod(), "is async"),
        (AsyncCallable(), "is async"),
    ],
)
def test_a_reporter_that_can_never_work_is_refused_at_composition(reporter: Any, says: str) -> None:
    with pytest.raises(GovernanceRefused, match=says):
        GovernanceCapability.compose(confidence=reporter, confidence_floor=0.7)


@pytest.mark.parametrize(
    ("value", "why"),
    [("0.9", "non_number"), (True, "bool"), (math.nan, "nan"), (math.inf, "infinite"), (1.5, "out_of_range"),
     (-0.1, "out_of_range"), (RuntimeError("boom"), "exception"), ([0.5], "non_number")],
)
async def test_a_bad_value_or_a_failing_reporter_forces_a_conservative_review(value: Any, why: str) -> None:
    critic = Critic()
    capability = GovernanceCapability.compose(reflector=critic, confidence=Reporter(value), confidence_floor=0.5)
    outcome = await capability.govern(ACK, CHAT)
    assert outcome.status == "invalid-signal" and outcome.reflector_attempted
    assert outcome.trigger == f"invalid_confidence:{why}" and len(critic.seen) == 1
    down = GovernanceCapability.compose(reflector=Critic(fail=True), confidence=Reporter(value), confidence_floor=0.5)
    assert (await down.govern(ACK, CHAT)).status == "invalid-signal-degraded"


async def test_an_awaitable_confidence_is_invalid_and_closed() -> None:
    async def later() -> float:
        return 0.9

    outcome = await GovernanceCapability.compose(reflector=Critic()).govern(GovernanceSubject("Got it", confidence=later()), CHAT)
    assert outcome.trigger == "invalid_confidence:awaitable" and outcome.status == "invalid-signal"


# --- trigger policies and adopter gates ------------------------------------------------


class Custom:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def trigger(self, subject: GovernanceSubject, context: CriticGateContext) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "fire", "trigger"),
    [
        ("legal_review", True, "legal_review"),
        ("tier2:maybe", True, "tier2:maybe"),
        (None, False, None),
        (ValueError("x"), True, "invalid_trigger:exception"),
        ("Not A Category!", True, "invalid_trigger:malformed"),
        (7, True, "invalid_trigger:malformed"),
        ("", True, "invalid_trigger:malformed"),
    ],
)
def test_a_custom_policy_returns_a_category_or_none(answer: Any, fire: bool, trigger: str | None) -> None:
    decision = GovernanceCapability.compose(trigger_policy=Custom(answer)).decide(GovernanceSubject("The invoice is $3."), CHAT)
    assert (decision.fire, decision.trigger) == (fire, trigger)


async def test_an_awaitable_from_a_policy_fires() -> None:
    async def later() -> str:
        return "x"

    class Sneaky:
        def trigger(self, subject: Any, context: Any) -> Any:
            return later()

    outcome = await GovernanceCapability.compose(reflector=Critic(), trigger_policy=Sneaky()).govern(ACK, CHAT)
    assert outcome.trigger == "invalid_trigger:awaitable" and outcome.status == "invalid-signal"


@pytest.mark.parametrize(
    ("gate", "fire", "trigger"),
    [
        (lambda ctx: True, True, "adopter_gate"),
        (lambda ctx: False, False, None),
        (lambda ctx: 1 / 0, True, "invalid_trigger:exception"),
        (lambda ctx: "yes", True, "invalid_trigger:malformed"),
        (lambda ctx: None, True, "invalid_trigger:malformed"),
        (lambda ctx: len(ctx.draft) > 40, False, None),
    ],
)
def test_an_adopter_gate_decides_over_the_context(gate: Any, fire: bool, trigger: str | None) -> None:
    capability = GovernanceCapability.compose(trigger_policy=gate)
    assert capability.selective  # supplying a gate implies opt-in
    decision = capability.decide(GovernanceSubject("The invoice is $3."), TurnEvidence(message="Pay it", tool_calls=("pay",)))
    assert (decision.fire, decision.trigger) == (fire, trigger)


async def _async_gate(ctx: Any) -> bool:
    return True


class AsyncGate:
    async def __call__(self, ctx: Any) -> bool:
        return True


class AsyncPolicy:
    async def trigger(self, subject: Any, context: Any) -> str:
        return "x"


class ShortPolicy:
    def trigger(self, subject: Any) -> str:
        return "x"


def _sync_reflector(subject: Any, context: Any) -> str:
    return "APPROVE: ok"


async def _one_arg_reflector(subject: Any) -> str:
    return "APPROVE: ok"


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"trigger_policy": 42}, "trigger_policy must be a policy"),
        ({"trigger_policy": _async_gate}, "adopter gate is async"),
        ({"trigger_policy": AsyncGate()}, "adopter gate is async"),
        ({"trigger_policy": lambda a, b: True}, "must take one argument"),
        ({"trigger_policy": AsyncPolicy()}, "trigger is async"),
        ({"trigger_policy": ShortPolicy()}, "must take two arguments"),
        ({"reflector": "critic"}, "reflector must be an async callable"),
        ({"reflector": _sync_reflector}, "reflector must be async"),
        ({"reflector": _one_arg_reflector}, "reflector must take two arguments"),
        ({"sensitive_terms": "legal"}, "sensitive_terms is a list of strings"),
        ({"sensitive_tags": ["legal", ""]}, "sensitive_tags holds non-empty strings"),
        ({"read_only_tools": [3]}, "read_only_tools holds non-empty strings"),
        ({"trivial_ack_patterns": ["(unclosed"]}, "is not a regular expression"),
        ({"confidence_floor": 1.5}, "confidence_floor is a number from 0 to 1"),
        ({"confidence_floor": True}, "confidence_floor is a number from 0 to 1"),
        ({"confidence_floor": math.nan}, "confidence_floor is a number from 0 to 1"),
        ({"confidence": Reporter(0.5)}, "needs confidence_floor"),
    ],
)
def test_every_composition_refusal_names_the_part(kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(GovernanceRefused, match=says):
        GovernanceCapability.compose(**kwargs)


# --- the outcome trace: five bounded statuses ------------------------------------------


async def test_each_status_of_the_outcome_trace() -> None:
    critic = Critic()
    capability = GovernanceCapability.compose(reflector=critic)
    skipped = await capability.govern(ACK, CHAT)
    assert (skipped.status, skipped.trigger, skipped.reflector_attempted) == ("skipped", None, False)
    reviewed = await capability.govern(GovernanceSubject("It is 42."), CHAT)
    assert (reviewed.status, reviewed.trigger, reviewed.reflector_attempted, reviewed.review) == (
        "reviewed", "draft_claim", True, "APPROVE: fine",
    )
    down = await GovernanceCapability.compose(reflector=Critic(fail=True)).govern(GovernanceSubject("It is 42."), CHAT)
    assert (down.status, down.reflector_attempted, type(down.error)) == ("degraded", True, ConnectionError)
    none = await GovernanceCapability.compose().govern(GovernanceSubject("It is 42."), CHAT)
    assert (none.status, none.reflector_attempted) == ("degraded", False)
    statuses = {skipped.status, reviewed.status, down.status}
    assert statuses <= set(STATUSES)


def test_the_context_is_frozen_and_carries_every_signal() -> None:
    capability = GovernanceCapability.compose(read_only_tools=["search"], trivial_ack_patterns=["^roger wilco$"])
    turn = TurnEvidence(message="Please do it", tool_calls=("search",), scope="ada", run_id="ada/7")
    context = capability.decide(ACK, turn).context
    assert (context.draft, context.intent_verdict, context.scope, context.run_id) == ("Got it, thanks!", "action", "ada", "ada/7")
    assert context.read_only_tools == frozenset({"search"}) and context.mutating_tools == ()
    assert context.trivial_ack_patterns == ("^roger wilco$",) and context.selective_gate_enabled
    with pytest.raises(AttributeError):
        context.draft = "x"  # type: ignore[misc]
    assert isinstance(capability.policy, SelectiveMetacognitionPolicy)


def test_adopter_ack_patterns_skip_through_the_capability() -> None:
    capability = GovernanceCapability.compose(trivial_ack_patterns=["roger wilco"])
    assert not capability.decide(GovernanceSubject("Roger wilco"), CHAT).fire
    assert GovernanceCapability.compose().decide(GovernanceSubject("Roger wilco"), CHAT).fire


# --- an answer is an assertion -----------------------------------------------------------

QUESTIONS = [
    "Is it safe to take ibuprofen with warfarin?", "Is the loan approved?", "Did the backup finish?",
    "¿Está aprobado el préstamo?", "Ist das Backup fertig?", "La sauvegarde est-elle terminée ?", "O backup terminou?",
    "Il backup è finito?", "Is de back-up klaar?", "バックアップは終わりましたか？", "备份完成了吗？", "Резервная копия готова?",
    "هل اكتمل النسخ الاحتياطي؟", "Ολοκληρώθηκε το αντίγραφο;", "Պահուստը պատրա՞ստ է", "ምትኬው ተጠናቋል፧",
    # without a mark
    "Is the loan approved", "Ist das sicher", "Est-ce que c'est prêt", "Será que está pronto", "Hast du es gesehen",
    "Avez-vous reçu le dossier", "The loan is approved, right", "Está aprobado, ¿verdad", "Das passt so, oder",
    "C'est bon, non", "Tá tudo certo, né", "备份完成了吗", "Готово ли", "大丈夫ですか",
]
AFFIRMATIVE_ACKS = [
    "Absolutely, no problem", "Certainly", "Of course", "Definitely", "Sure thing", "Yes, all good", "Por supuesto",
    "Claro que sí", "Natürlich, kein Problem", "Bien sûr", "Com certeza", "Конечно", "好的", "Certo", "Natuurlijk",
]


@pytest.mark.parametrize("message", QUESTIONS)
@pytest.mark.parametrize("draft", AFFIRMATIVE_ACKS)
def test_an_ack_answering_a_question_is_an_answer_and_fires(draft: str, message: str) -> None:
    decision = GovernanceCapability.compose().decide(GovernanceSubject(draft), TurnEvidence(message=message))
    assert decision.fire and "answers_question" in decision.triggers


@pytest.mark.parametrize(
    "message",
    ["Thanks for the update", "I'll be offline tomorrow afternoon.", "Good morning!", "The build went green.",
     "Gracias por la ayuda", "Danke für die Info", "Merci pour ton aide", "Obrigado pela ajuda", "Ich melde mich später"],
)
@pytest.mark.parametrize("draft", ["Of course", "Sure thing", "Por supuesto", "Natürlich, kein Problem", "Bien sûr", "Com certeza"])
def test_the_same_ack_after_a_statement_thanks_or_greeting_still_skips(draft: str, message: str) -> None:
    decision = GovernanceCapability.compose().decide(GovernanceSubject(draft), TurnEvidence(message=message))
    assert not decision.fire, decision.triggers
