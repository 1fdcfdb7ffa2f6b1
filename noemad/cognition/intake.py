"""What a stimulus must satisfy against the mind's state before it is stored.

The stimulus types (`noemad.stimuli`) are data and know nothing of beliefs,
goals or predictions; the checks that read those live here, above them. The
supervisor runs `check` in the same writer job that stores the stimulus, so
nothing changes between the check and the write.
"""

from __future__ import annotations

from sqlite_utils import Database

from noemad.cognition.beliefs.model import check_proposition
from noemad.cognition.beliefs.queries import get_belief
from noemad.cognition.goals import GoalClosed, check_progress, check_title, get_goal
from noemad.cognition.predictions import RESULTS, check_confidence, check_resolvable
from noemad.errors import InvalidInput
from noemad.stimuli import Correction, GoalStimulus, OutcomeStimulus, PredictionStimulus, Stimulus, closing_stimulus


def check(db: Database, mind: str, stimulus: Stimulus) -> None:
    """Raise the error that says why `stimulus` may not be stored for `mind`; messages, observations and assertions always may."""
    match stimulus:
        case Correction():
            _check_correction(db, mind, stimulus)
        case GoalStimulus():
            _check_goal(db, mind, stimulus)
        case PredictionStimulus():
            # The due time was checked against the clock when the request was parsed.
            check_proposition(stimulus.proposition, stimulus.subject)
            check_confidence(stimulus.confidence)
        case OutcomeStimulus():
            if stimulus.result not in RESULTS:
                raise InvalidInput(f"an outcome is a hit or a miss, not {stimulus.result!r}")
            check_resolvable(db, mind, stimulus.prediction)


def _check_correction(db: Database, mind: str, correction: Correction) -> None:
    """A status or a confidence, for a belief that exists and is the mind's."""
    if correction.status is None and correction.confidence is None:
        raise InvalidInput("a correction sets a status (active, pinned, rejected) or a confidence, or both")
    belief = get_belief(db, correction.belief)
    if belief.mind != mind:
        raise InvalidInput(f"belief {correction.belief} belongs to mind {belief.mind!r}, not {mind!r}")


def _check_goal(db: Database, mind: str, s: GoalStimulus) -> None:
    """A new goal needs a title; a change names an active goal of this mind and says how it changes."""
    if s.progress is not None:
        check_progress(s.progress)
    if s.goal is None:
        if s.title is None:
            raise InvalidInput("a goal stimulus sets a new goal (title) or changes one (goal, with progress or status)")
        check_title(s.title)
        if s.status is not None:
            raise InvalidInput("a new goal is active; status completes or abandons an existing one (give its id as goal)")
        if s.progress is not None and s.progress >= 1.0:
            raise InvalidInput("a new goal cannot start complete; give a progress below 1")
        return
    if s.title is not None:
        raise InvalidInput(f"title names a new goal; to change goal {s.goal}, give only progress or status")
    if s.progress is None and s.status is None:
        raise InvalidInput(f"say how goal {s.goal} changes: a progress, or status completed or abandoned")
    goal = get_goal(db, s.goal)
    if goal.mind != mind:
        raise InvalidInput(f"goal {s.goal} belongs to mind {goal.mind!r}, not {mind!r}")
    if goal.status != "active":
        raise GoalClosed(f"goal {s.goal} is {goal.status}; a closed goal takes no more changes (set a new one)")
    closing = closing_stimulus(db, mind, s.goal)
    if closing is not None:
        raise GoalClosed(f"goal {s.goal} is being closed by event {closing}; a closed goal takes no more changes")
