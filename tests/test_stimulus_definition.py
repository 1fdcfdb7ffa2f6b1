"""A stimulus class is the one definition of its kind: request body, conversion, stored data and reading back.

`noemad.wire.body` derives the body from the dataclass's fields; a field added
to the class is asked for by the API, converted, stored and read back with no
second edit. The witnesses: a toy stimulus declared here, and the real ones'
bodies holding exactly their classes' fields.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import TypeAdapter, ValidationError

from noemad.events import Event
from noemad.fields import BODY, Author, Text
from noemad.stimuli import (
    IN_TEXT,
    OR_ACTOR,
    Operator,
    AssertionIn,
    CorrectionIn,
    GoalIn,
    MessageIn,
    ObservationIn,
    OutcomeIn,
    PredictionIn,
    Tags,
    _Stimulus,
)
from noemad.stimuli import Assertion, Claim, Correction, GoalStimulus, Message, Observation, OutcomeStimulus, PredictionStimulus, as_stimulus, operator_of, stored_by
from noemad.wire import HIDDEN, OMIT_EMPTY, body, from_body, wire


@wire
@dataclass(frozen=True)
class Wave(_Stimulus):
    """Someone waves at the mind."""

    KIND: ClassVar[str] = "wave"
    author: Annotated[Author, OR_ACTOR]
    """Who waves."""
    text: Annotated[Text, HIDDEN, IN_TEXT]
    hands: int = 1
    tags: Annotated[Tags, OMIT_EMPTY] = ()
    operator: Operator = None  # STAMPED: the daemon's to set


WaveIn = body(Wave, "WaveIn", BODY, kind=Wave.KIND)


def test_a_field_declared_once_is_asked_for_converted_stored_and_read_back() -> None:
    schema = WaveIn.model_json_schema()
    assert list(schema["properties"]) == ["kind", "author", "text", "hands", "tags"]  # the daemon's `operator` is not asked for
    assert schema["properties"]["author"]["description"] == "Who waves."
    given = WaveIn.model_validate_json(b'{"kind": "wave", "author": " ann ", "text": "o/", "hands": 2, "tags": ["a", "a", "b"]}')
    wave = from_body(given, 0.0)
    assert wave == Wave(author="ann", text="o/", hands=2, tags=("a", "b"))
    assert wave.to_data() == {"author": "ann", "hands": 2, "tags": ["a", "b"]}  # the text is the event's own column
    event = Event(1, "ada", "wave", "user:ann", "2026-01-01T00:00:00.000Z", None, "o/", wave.to_data(), None, None, (), (), None)
    assert Wave.of(event) == wave
    bare = dataclasses.replace(event, data={})
    assert Wave.of(bare) == Wave(author="user:ann", text="o/")  # read as old events are: the actor stands in
    with pytest.raises(ValidationError, match="operator"):
        WaveIn.model_validate({"kind": "wave", "author": "ann", "text": "o/", "operator": "operator:root"})


@pytest.mark.parametrize(
    ("cls", "model", "asked_instead"),
    [
        (Message, MessageIn, {}),
        (Observation, ObservationIn, {}),
        (Assertion, AssertionIn, {}),
        (Correction, CorrectionIn, {}),
        (GoalStimulus, GoalIn, {}),
        (PredictionStimulus, PredictionIn, {"due_at": "due"}),
        (OutcomeStimulus, OutcomeIn, {}),
    ],
)
def test_each_stimulus_body_holds_its_class_fields(cls: Any, model: Any, asked_instead: dict[str, str]) -> None:
    fields = [asked_instead.get(f.name, f.name) for f in dataclasses.fields(cls) if f.name != "operator"]
    assert list(model.model_fields) == ["kind", *fields]
    assert model.model_fields["kind"].annotation.__args__ == (cls.KIND,)


def test_a_body_converts_to_its_stimulus_with_the_daemons_clock() -> None:
    given = TypeAdapter(PredictionIn).validate_python(
        {"kind": "prediction", "proposition": "p", "subject": "s", "confidence": 0.5, "due": "2h"}
    )
    assert from_body(given, 1000.0) == PredictionStimulus("p", "s", 0.5, 1000.0 + 7200)


@pytest.mark.parametrize(
    "stimulus",
    [
        Message(author="alice", text="hi ada", channel="irc:#ops", mentions=("ada",), dm=True, reply_to=3, tags=("x",)),
        Observation(source="ci", text="build 41 failed", claim=Claim("the build is red", "build"), tags=("ci",)),
        Assertion(source="bob", claim=Claim("the parser is slow", "parser", "contradicts")),
        Correction(belief=4, reason="wrong", status="rejected"),
        GoalStimulus(title="fix the build", progress=0.25),
        PredictionStimulus("the deploy lands", "deploy", 0.75, 1_800_000_000.0),
        OutcomeStimulus(5, "miss", "it did not"),
    ],
    ids=lambda s: type(s).__name__,
)
def test_a_stored_stimulus_reads_back_as_the_object_its_class_makes(stimulus: Any) -> None:
    # `of` builds the object without the dataclass' __init__ (speed): it must be the very object __init__ makes.
    assert "__post_init__" not in vars(type(stimulus))  # one would be skipped
    draft = stimulus.draft("ada")
    event = Event(1, "ada", draft.kind, draft.actor, "2026-01-01T00:00:00.000Z", draft.channel, draft.text, draft.data, None, None, (), (), None)
    read = type(stimulus).of(event)
    made = type(stimulus)(**{f.name: getattr(read, f.name) for f in dataclasses.fields(read)})
    assert read == stimulus and vars(read) == vars(made) and list(vars(read)) == list(vars(made))
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.kind_of_change = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "stimulus",
    [Message(author="alice", text="hi", mentions=("ada",)), Observation(source="ci", text="red", tags=("ci",)), Assertion(source="bob", claim=Claim("x", "y"))],
    ids=lambda s: type(s).__name__,
)
def test_a_stimulus_stored_by_an_operator_is_the_object_replace_makes(stimulus: Any) -> None:
    # stored_by builds it without the dataclass' __init__ (speed), as `of` does.
    stored = stored_by(stimulus, "operator:root")
    made = dataclasses.replace(stimulus, operator="operator:root")
    assert stored == made and vars(stored) == vars(made) and list(vars(stored)) == list(vars(made))
    assert stimulus.operator is None  # the one given is left as it was


@pytest.mark.parametrize("stored", ["operator:root", None, 7, "alice", ["operator:root"]], ids=repr)
@pytest.mark.parametrize("kind", ["message", "observation", "assertion"])
def test_the_operator_of_a_stored_stimulus_is_the_one_its_payload_reads(kind: str, stored: Any) -> None:
    # operator_of reads the one field alone; it must read what the whole payload reads, leniently as ever.
    data: dict[str, Any] = {"author": "alice", "source": "ci", "claim": {"proposition": "x", "subject": "y"}}
    if stored is not None:
        data["operator"] = stored
    event = Event(1, "ada", kind, "user:alice", "2026-01-01T00:00:00.000Z", "cli", "hi", data, None, None, (), (), None)
    assert operator_of(event) == as_stimulus(event).operator  # type: ignore[union-attr]
    assert operator_of(event) == (stored if stored == "operator:root" else None)
