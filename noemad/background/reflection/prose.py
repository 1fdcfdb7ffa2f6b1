"""The reflection's prose: a plain first-person rendering, a one-line summary, and the model's rewording.

`render` gives one short first-person line per finding, the first
MAX_PATTERN_LINES patterns one by one and the rest counted; deterministic.
With a `narrate` model and a model call left in the run's budget
(`[schedules.reflection] model_calls`), the model may reword it through the
wording guard (`noemad.cognition.wording`, PROSE): kept only if it adds
nothing to the plain prose and the mind's name. The findings never change.
`reason` says why the prose stayed plain: `empty_period` (nothing to
reword), `no_calls`, `no_model`, or the guard's reasons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from noemad.background.jobs import JobContext
from noemad.background.reflection.findings import CONFIDENT, Findings, mean
from noemad.cognition.narrative.phrasing import clip
from noemad.cognition.wording import PROSE, Support, Worded, adds_nothing
from noemad.cognition.wording import reword as guarded_reword

if TYPE_CHECKING:
    from noemad.background.reflection.patterns import Pattern

MAX_QUOTE = 80  # characters of a proposition or title quoted in the prose
MAX_PATTERN_LINES = 5  # patterns the prose describes one by one (the data holds them all)
SYSTEM = (
    "You reword a mind's reflection on its recent past into plain first-person prose. Use only the words, names and"
    " numbers of the reflection: add no facts, names, numbers, opinions or hedges, and change no number. Quote lessons"
    " as they are. You may reorder, join and shorten sentences. Answer with the reworded reflection only."
)


def _n(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _misses_phrase(misses: int, confident: int) -> str:
    if confident == misses:
        return _n(misses, "confident prediction miss", "confident prediction misses")
    words = _n(misses, "prediction miss", "prediction misses")
    return f"{words} ({confident} confident)" if confident else words


def lesson_text(p: Pattern) -> str:
    """The procedural memory a new pattern is written as: what failed, then what to do differently.

    The advice follows the failures: mostly on a single source -> seek an
    independent source; mostly confident misses -> state lower confidence;
    mostly operator corrections -> check with an operator; else gather evidence.
    """
    parts = []
    if p.misses:
        parts.append(_misses_phrase(p.misses, p.confident_misses))
    if p.rejected:
        parts.append(_n(p.rejected, "rejected belief"))
    if p.corrections:
        parts.append(_n(p.corrections, "operator correction"))
    thin = ""
    if p.single_source == p.failures:
        thin = ", each resting on a single source"
    elif 2 * p.single_source >= p.failures:
        thin = f", {p.single_source} of them resting on a single source"
    s = p.subject
    if 2 * p.single_source >= p.failures:
        advice = f"Seek an independent source before raising confidence on {s}."
    elif 2 * p.confident_misses >= p.failures:
        advice = f"State lower confidence on {s} until predictions about it come true."
    elif 2 * p.corrections >= p.failures:
        advice = f"Check beliefs about {s} with an operator before relying on them."
    else:
        advice = f"Gather more evidence on {s} before forming hypotheses about it."
    return f"Lesson: {_and(parts)} on {s} within {p.days} days{thin}. {advice}"


def _when(at: str) -> str:
    return f"{at[:10]} {at[11:16]} UTC" if len(at) >= 16 and at[10] == "T" else at


def _subjects(counts: Counter[str], limit: int = 5) -> str:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"{s} ({n})" for s, n in ranked[:limit]]
    if len(ranked) > limit:
        shown.append(_n(len(ranked) - limit, "more subject"))
    return _and(shown)


def _quoted(texts: Sequence[str], limit: int = 3) -> str:
    shown = [f"“{clip(t, MAX_QUOTE)}”" for t in texts[:limit]]
    if len(texts) > limit:
        shown.append(f"{len(texts) - limit} more")
    return _and(shown)


def render(f: Findings) -> str:
    """The plain prose of a reflection: one short first-person line per finding. Deterministic."""
    head = f"I reflected on what happened from {_when(f.period.start)} to {_when(f.period.end)}"
    if f.empty():
        return (
            f"{head}: nothing happened that calls for reflection. No prediction was resolved, no belief was rejected,"
            " corrected or changed status, and no goal was completed."
        )
    lines = [f"{head} ({_n(f.period.events, 'event')})."]
    c = f.counts()
    if f.predictions:
        line = (
            f"Predictions: {c['predictions_resolved']} resolved, {_n(c['hits'], 'hit')} and"
            f" {_n(c['misses'], 'miss', 'misses')}, mean error {mean([p.error for p in f.predictions]):.2f}."
        )
        confident = Counter(p.subject for p in f.predictions if p.confident_miss)
        if confident:
            line += f" {_n(c['confident_misses'], 'confident miss', 'confident misses')} (stated {CONFIDENT} or more), on {_subjects(confident)}."
        lines.append(line)
    if f.rejected:
        by = Counter(r.by for r in f.rejected)
        phrases = {"outcome": "after a missed prediction", "operator": "by an operator", "evidence": "by the evidence"}
        lines.append(f"Rejected beliefs: {len(f.rejected)} ({_and([f'{by[k]} {v}' for k, v in phrases.items() if by[k]])}).")
    if f.corrections:
        effects = Counter(x.effect for x in f.corrections)
        shown = _and([f"{effects[e]} {e}" for e in ("rejected", "lowered", "raised", "kept") if effects[e]])
        lines.append(
            f"Operator corrections: {len(f.corrections)} ({shown}), on {_subjects(Counter(x.subject for x in f.corrections))}."
        )
    if f.status_changes:
        moves = Counter(f"{x.status_from} to {x.status_to}" for x in f.status_changes)
        shown = _and([f"{k} {n}" for k, n in sorted(moves.items(), key=lambda kv: (-kv[1], kv[0]))])
        lines.append(f"Belief status changes: {len(f.status_changes)} ({shown}).")
    if f.contested:
        beliefs = list(dict.fromkeys(x.belief for x in f.contested))
        still = [x for x in dict((x.belief, x) for x in f.contested).values() if x.status_now == "contested"]
        line = f"Contradictions: {_n(len(beliefs), 'belief')} became contested"
        line += f", {len(still)} still {'is' if len(still) == 1 else 'are'}: {_quoted([x.proposition for x in still])}." if still else ", none still is."
        lines.append(line)
    if f.goals_completed:
        lines.append(f"Goals completed: {len(f.goals_completed)}: {_quoted([g.title for g in f.goals_completed])}.")
    period, overall = f.calibration_period, f.calibration_overall
    if overall.resolved:
        line = "Calibration: "
        if period.resolved:
            line += f"Brier {period.brier:.2f} over {_n(period.resolved, 'prediction')} this period, "
        line += f"Brier {overall.brier:.2f} over {_n(overall.resolved, 'prediction')} overall"
        if overall.overconfident:
            line += f"; stated confidence {overall.mean_stated:.2f} runs ahead of a hit rate of {overall.hit_rate:.2f}"
        lines.append(line + ".")
    for p in f.patterns[:MAX_PATTERN_LINES]:
        failures = f"{_n(p.failures, 'failure')} on {p.subject} within {p.days} days"
        if p.status == "new":
            lines.append(f"New pattern: {failures}. I learnt a lesson: “{p.lesson}”")
        else:
            lines.append(f"Known pattern: {failures}, {p.in_period} of them this period; its lesson stands (memory #{p.memory}).")
    rest = f.patterns[MAX_PATTERN_LINES:]
    if rest:
        new = sum(1 for p in rest if p.status == "new")
        subjects = [p.subject for p in rest[:5]] + ([_n(len(rest) - 5, "more subject")] if len(rest) > 5 else [])
        lines.append(f"{_n(len(rest), 'more pattern')} ({new} new, {len(rest) - new} known), on {_and(subjects)}.")
    return "\n".join(lines)


def summary(f: Findings, lessons: int) -> str:
    """One sentence for the job's outputs, e.g. "3 prediction misses on deploy; 1 new lesson"."""
    parts = []
    misses = f.misses
    if misses:
        subjects = Counter(p.subject for p in misses)
        top, top_count = sorted(subjects.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        phrase = _n(len(misses), "prediction miss", "prediction misses")
        if len(subjects) == 1:
            phrase += f" on {top}"
        elif top_count >= 2:
            phrase += f" ({top_count} on {top})"
        parts.append(phrase)
    others = [r for r in f.rejected if r.by == "evidence"]  # the rest are the misses and the corrections
    for count, singular, plural in (
        (len(others), "belief rejected", "beliefs rejected"),
        (len(f.corrections), "correction", "corrections"),
        (len({x.belief for x in f.contested}), "belief contested", "beliefs contested"),
        (len(f.goals_completed), "goal completed", "goals completed"),
    ):
        if count:
            parts.append(_n(count, singular, plural))
    known = sum(1 for p in f.patterns if p.status == "known")
    if known:
        parts.append(_n(known, "known pattern") + " recurred")
    if not parts and not lessons:
        return f"nothing to reflect on since {_when(f.period.start)}"
    parts.append(_n(lessons, "new lesson") if lessons else "no new lesson")
    return "; ".join(parts)



async def reword(ctx: JobContext, f: Findings, plain: str) -> Worded:
    """The prose the event holds: the narrate model's rewording if allowed and it adds nothing, else `plain` and why.

    Never raises a `ModelError`; every call made (or refused with a ledger row)
    is recorded on the job.
    """
    if f.empty():
        return Worded.plain(plain, "empty_period", "nothing happened in the period, so there is nothing to reword")
    if ctx.calls_left <= 0:
        return Worded.plain(plain, "no_calls", "the run's model budget is spent ([schedules.reflection] model_calls)")
    if not ctx.gateway.configured(ctx.mind, "narrate"):
        return Worded.plain(plain, "no_model", "no model is configured for the narrate role; set [models] in noemad.toml")
    from noemad.models import Block, Prompt, Turn

    prompt = Prompt(
        role="narrate",
        mind=ctx.mind,
        system=(Block(SYSTEM),),
        messages=(Turn.user(f"Reword this reflection by {ctx.mind} in the first person, adding nothing:\n\n{plain}"),),
    )
    check = adds_nothing(Support.of(PROSE, [plain, ctx.mind]), "the rewording says what the reflection does not")
    return await guarded_reword(ctx.gateway, prompt, plain, check, on_call=ctx.record_call)
