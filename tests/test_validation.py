"""One reading of pydantic's errors (`noemad.validation`), worded by two readers: a file's keys and a body's fields.

The wording each reader had is held by tests/test_config_errors.py and
tests/test_api.py; these are what each reader gained from the other by
sharing the reading: a kind one of them named only in pydantic's words.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noemad.api.problems import describe_error
from noemad.config.problems import validation_problems
from noemad.validation import read_error


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("ada", pattern=r"^[a-z]+$")
    pair: tuple[int, int] = (1, 2)
    budget: float = Field(1.0, le=1_000_000.0)


def _errors(**data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Section.model_validate(data)
    return caught.value


def test_a_file_key_not_of_its_pattern_says_the_form_to_write() -> None:
    assert validation_problems(_errors(name="ADA"), Section) == ['name: write a string of the form ^[a-z]+$, not "ADA"']


def test_a_body_field_that_is_not_a_list_says_so_in_a_bodys_words() -> None:
    (err,) = _errors(pair=3).errors()
    assert describe_error(err) == "pair must be a list (a JSON array), not 3"


def test_both_readers_write_a_large_bound_as_a_person_does() -> None:
    exc = _errors(budget=2_000_000.0)
    assert describe_error(exc.errors()[0]) == "budget must be at most 1000000, not 2000000.0"
    assert validation_problems(exc, Section) == ["budget: write a number of at most 1000000, not 2000000.0"]


def test_the_reading_is_the_same_for_both() -> None:
    (err,) = _errors(budget="lots").errors()
    problem = read_error(err)
    assert (problem.category, problem.noun, problem.loc, problem.given) == ("type", "number", ("budget",), "lots")
    assert describe_error(err) == "budget must be a number, not 'lots'"
    assert validation_problems(_errors(budget="lots"), Section) == ['budget: write a number of at most 1000000, not "lots"']
