"""Reflection: a mind reviews what happened since it last reflected, and learns from repeated failure.

One run (`run`, a reflection job) reviews the period since the mind's last
reflection, finds the patterns of repeated failure, renders the findings as
prose (a model may reword it), and records one `reflection` event with a
lesson (a procedural memory) per new pattern.

| module      | holds                                                                            |
|-------------|----------------------------------------------------------------------------------|
| `findings`  | what a review finds: the period, resolved predictions, belief changes, goals     |
| `reading`   | the review: SQL reads over the period, in one snapshot                           |
| `patterns`  | failures on a subject, the patterns they make, the lesson a new one teaches, and |
|             | the patterns learnt (`reflection_patterns`)                                      |
| `prose`     | the plain first-person rendering, the one-line summary, the model's rewording    |
| `recording` | the `reflection` event and its lessons (one writer job)                          |
| `job`       | `run`: review, render, reword, record                                            |

Cost: every read is an indexed range on `events(mind, kind, id)` between two
event ids, or a primary-key lookup; bench/reflection.py measures a month of a
busy mind (about 58,000 events): about 0.1 s a run.
"""

from noemad.background.reflection.findings import (
    ACTOR,
    CONFIDENT,
    KIND,
    MAX_ITEMS,
    BeliefChange,
    Findings,
    GoalCompleted,
    Lookback,
    Period,
    PredictionError,
)
from noemad.background.reflection.job import run
from noemad.background.reflection.patterns import FAILED_MISS_MIN, PATTERN_MIN, Failure, Pattern, failures_of
from noemad.background.reflection.prose import SYSTEM, lesson_text, render, reword, summary
from noemad.background.reflection.reading import LOOKBACK, collapse, previous_reflection, review
from noemad.background.reflection.recording import Recorded, citations, record
from noemad.events import first_event_since  # where it lives now: `noemad.cognition.asof` bisects time with it too

__all__ = [
    "ACTOR", "CONFIDENT", "FAILED_MISS_MIN", "KIND", "LOOKBACK", "MAX_ITEMS", "PATTERN_MIN", "SYSTEM", "BeliefChange",
    "Failure", "Findings", "GoalCompleted", "Lookback", "Pattern", "Period", "PredictionError", "Recorded", "citations",
    "collapse", "failures_of", "first_event_since", "lesson_text", "previous_reflection", "record", "render", "review",
    "reword", "run", "summary",
]
