"""What the governance gate costs per draft, and how often it fires the critic against always-on.

    .venv/bin/python bench/governance.py [--rounds R]

Decision time: `GovernanceCapability.decide` (the default selective policy,
three sensitive terms, two sensitive tags, a read-only tool, evidence for
fabrication findings) on every draft of a traffic mix, each timed alone
(perf_counter_ns) with the detectors' caches emptied before it, so each
figure is a cold decision (the daemon sees each draft once). Goal: p50 <=
100 µs.

Firing rate: a busy mind's 20 turns (the specification's "high-turn
production traffic") in five languages: eleven acknowledgments of chat
("thanks for the update" → "got it, thanks") and nine turns with a risk
signal (a number, a name, a request for action, a mutating tool, a
fabrication, a recalled sensitive tag). Always-on reviews all 20; the goal
is at most 10 of 20 with no false skip (a risky turn skipped).

Acks per language: the corpus of real acknowledgements in
tests/data/acks.toml. Each plain ack after a message that tells, thanks or
greets (paired in turn with the language's statements): the share that
skips, goal >= 90% in each of EN/ES/DE/FR/PT. The same acks answering each
of the language's questions, and the risky drafts after every statement:
how many skip, goal 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from noemad.governance import GovernanceCapability, GovernanceSubject, TurnEvidence  # noqa: E402
from noemad.governance import acks, claims, text  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _report import figure  # noqa: E402  (bench/_report.py)

CORPUS = tomllib.loads((ROOT / "tests" / "data" / "acks.toml").read_text())
LANGUAGES = ("en", "es", "de", "fr", "pt")

SHARE_GOAL = 0.9

WINDOW = ("alice: can you look at the deploy later", "ada: sure", "alice: the invoice for ACME is 1200 dollars")

# (message answered, draft, tools called, recalled tags, risky?)
MIX: list[tuple[str, str, tuple[str, ...], tuple[str, ...], bool]] = [
    ("Thanks for the update!", "Got it, thanks!", (), (), False),
    ("Thanks, that helps", "You're welcome!", (), (), False),
    ("Great work today", "Thanks so much!", (), (), False),
    ("I'll be offline tomorrow", "Noted, thanks for letting me know.", (), (), False),
    ("Gracias por la ayuda", "¡De nada!", (), (), False),
    ("Te aviso cuando termine", "Vale, perfecto.", (), (), False),
    ("Danke für die Info", "Alles klar, danke dir!", (), (), False),
    ("Ich melde mich später", "In Ordnung, danke!", (), (), False),
    ("Merci pour ton aide", "Avec plaisir !", (), (), False),
    ("Obrigado pela ajuda", "De nada, disponha!", (), (), False),
    ("Good morning!", "Good morning!", ("search",), (), False),  # a read-only tool: still an ack
    ("How much is the ACME invoice?", "It is 1,200 dollars.", (), (), True),
    ("Please send the invoice to Alice", "Got it, sending it now.", ("send_email",), (), True),
    ("Can you schedule the review?", "Sure, will do.", (), (), True),
    ("What's the status?", "Bob approved it yesterday.", (), (), True),
    ("Thanks!", "Got it, thanks!", (), ("legal",), True),
    ("Who owns the deploy?", "Carol owns it, per the runbook at wiki/deploys.", (), (), True),
    ("¿Cuándo es la reunión?", "El martes a las diez.", (), (), True),
    ("Kannst du das erledigen?", "Mache ich.", (), (), True),
    ("明天见", "了解しました", (), (), True),  # a message in no known language: ambiguous intent fires
]


def capability() -> GovernanceCapability:
    return GovernanceCapability.compose(
        sensitive_terms=("jurisdiccion", "clausula", "diagnosis"), sensitive_tags=("legal", "medical"), read_only_tools=("search",)
    )


def turn(message: str, tools: tuple[str, ...], tags: tuple[str, ...]) -> TurnEvidence:
    return TurnEvidence(message=message, tool_calls=tools, evidence=(*WINDOW, message), recalled_tags=tags)


def cold() -> None:
    claims.draft_claims.cache_clear()
    acks.ack_language.cache_clear()
    text.fold.cache_clear()


def timings(rounds: int) -> list[float]:
    cap = capability()
    best: list[float] | None = None
    for _ in range(rounds):
        samples: list[float] = []
        for message, draft, tools, tags, _risky in MIX * 25:
            subject, evidence = GovernanceSubject(draft), turn(message, tools, tags)
            cold()
            start = time.perf_counter_ns()
            cap.decide(subject, evidence)
            samples.append((time.perf_counter_ns() - start) / 1000)
        if best is None or statistics.median(samples) < statistics.median(best):
            best = samples
    assert best is not None
    return best


def firing() -> tuple[int, int, list[str]]:
    cap = capability()
    fired = 0
    false_skips: list[str] = []
    for message, draft, tools, tags, risky in MIX:
        decision = cap.decide(GovernanceSubject(draft), turn(message, tools, tags))
        fired += decision.fire
        if risky and not decision.fire:
            false_skips.append(draft)
    return fired, len(MIX), false_skips


def acks_per_language() -> tuple[dict[str, tuple[int, int, int, int]], list[tuple[str, str]]]:
    """Per language: (acks after statements that skip, of how many, answers to questions that skip, of how many);
    and the risky drafts that skip after a statement."""
    cap = GovernanceCapability.compose()
    found: dict[str, tuple[int, int, int, int]] = {}
    for lang in LANGUAGES:
        acks, statements, questions = CORPUS[lang]["acks"], CORPUS[lang]["statements"], CORPUS[lang]["questions"]
        skipped = sum(
            not cap.decide(GovernanceSubject(ack), TurnEvidence(message=statements[i % len(statements)])).fire
            for i, ack in enumerate(acks)
        )
        answers = sum(not cap.decide(GovernanceSubject(ack), TurnEvidence(message=q)).fire for ack in acks for q in questions)
        found[lang] = (skipped, len(acks), answers, len(acks) * len(questions))
    statements = [m for lang in LANGUAGES for m in CORPUS[lang]["statements"]]
    risky = [(d, m) for d in CORPUS["risky"]["drafts"] for m in statements
             if not cap.decide(GovernanceSubject(d), TurnEvidence(message=m)).fire]
    return found, risky


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    samples = sorted(timings(args.rounds))
    p50, p95 = statistics.median(samples), samples[int(len(samples) * 0.95)]
    print(f"decide, cold, {len(samples)} drafts, best of {args.rounds} rounds (µs per draft)")
    print(f"  p50 {p50:6.1f}  p95 {p95:6.1f}  mean {statistics.fmean(samples):6.1f}   (goal: p50 <= 100)")
    fired, total, false_skips = firing()
    print(f"critic firing: {fired}/{total} selective vs {total}/{total} always-on   (goal: <= 10/20, no false skip)")
    print(f"false skips: {len(false_skips)}" + (f" {false_skips}" if false_skips else ""))
    per_language, risky = acks_per_language()
    print(f"plain acks after a statement that skip (goal >= {SHARE_GOAL:.0%}), and the same acks answering a question that skip (goal 0)")
    short = False
    min_share = min(skipped / acks for skipped, acks, _, _ in per_language.values())
    for lang, (skipped, acks, answers, asked) in per_language.items():
        short = short or skipped / acks < SHARE_GOAL or answers > 0
        print(f"  {lang}  {skipped / acks:6.1%} ({skipped}/{acks})   answers skipped {answers}/{asked}")
    print(f"risky drafts skipped after a statement: {len(risky)}" + (f" {risky[:5]}" if risky else ""))
    figure("governance", "decide, cold, p50", f"{p50:.1f} µs", "<= 100 µs", p50 <= 100, size=f"{len(samples)} drafts")
    figure("governance", "critic firing, selective", f"{fired}/{total}, {len(false_skips)} false skips", "<= half, no false skip",
           fired <= total // 2 and not false_skips)
    figure("governance", "plain acks skipped / risky drafts skipped", f"{min_share:.0%} (lowest language) / {len(risky)}",
           f">= {SHARE_GOAL:.0%}, no answer skipped / 0", not short and not risky)
    return 0


if __name__ == "__main__":
    sys.exit(main())
