"""Pydantic's validation errors as sentences in the operator's words: the key as written in the file, what to write, what was given.

The file's reader of the one translator (`noemad.validation` reads each error;
`noemad.api.problems` words the same for a request body's fields), for
noemad.toml and for a mind's stored settings (`noemactl mind set`, the settings
API): each problem names its key as it is written in TOML (`minds.ada.x`,
`gate.privileged[2]`), the bound or the choices the setting takes, and, for an
unknown key, the nearest valid one.
"""

from __future__ import annotations

import difflib
from collections.abc import Sized
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from noemad.config.toml import toml_key, toml_value
from noemad.validation import Noun, Problem, number, read_error


def _tagged(annotation: Any) -> dict[str, type[BaseModel]]:
    """The arms of a list of tables told apart by a tag (`[[minds.NAME.connectors]]`, by `kind`), by tag; {} if it is not one."""
    if get_origin(annotation) is not list:
        return {}
    inner = get_args(annotation)[0]
    if get_origin(inner) is Annotated:
        inner = get_args(inner)[0]
    arms: dict[str, type[BaseModel]] = {}
    for arm in get_args(inner):
        tag = arm.model_fields.get("kind") if isinstance(arm, type) and issubclass(arm, BaseModel) else None
        for value in get_args(tag.annotation) if tag is not None else ():
            arms[value] = arm
    return arms


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The section model an annotation holds, and whether it is a table of them keyed by name."""
    if get_origin(annotation) is dict:
        inner = get_args(annotation)[1]
        return (inner, True) if isinstance(inner, type) and issubclass(inner, BaseModel) else (None, False)
    for candidate in (annotation, *get_args(annotation)):  # `X | None`
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
    return None, False


@dataclass(frozen=True)
class _Where:
    """Where one validation problem is: the key as written in the file, and the setting it names (if found)."""

    key: str  # e.g. minds.ada.attention_capacity, gate.privileged[2], pricing."claude-x.y".input
    field: Any  # the pydantic FieldInfo of the setting, for its bounds and choices; None below a free-form value
    fields: list[str]  # the valid keys beside it (for an unknown key)


def _where(loc: tuple[Any, ...], root: type[BaseModel], prefix: str) -> _Where:
    """Walk `loc` down `root`, naming each part the way an operator writes it in TOML.

    A list index is shown 1-based in brackets (rules are counted from 1
    everywhere else); the tags pydantic adds for the arms of a union
    (`str`, `dict[str,any]`) name no key and are left out.
    """
    parts: list[str] = [prefix] if prefix else []
    model: Any = root
    keyed = False
    tagged: dict[str, type[BaseModel]] = {}
    field: Any = None
    fields: list[str] = list(root.model_fields)
    for part in loc:
        if isinstance(part, int):  # an item of a list: privileged[2], rules[1]
            parts.append(f"{parts.pop() if parts else ''}[{part + 1}]")
            continue
        if tagged and part in tagged:  # the tag pydantic puts before a tagged table's key: read on in its arm
            model, tagged, field = tagged[part], {}, None
            fields = list(model.model_fields)
            continue
        if keyed:  # a name in a table such as [minds.NAME] or [pricing."MODEL"]
            parts.append(toml_key(part))
            keyed = False
            fields = list(model.model_fields) if model is not None else []
            continue
        if model is None:  # below a setting that is not a section: a union's tag
            continue
        parts.append(toml_key(part))
        field = model.model_fields.get(part)
        if field is None:  # an unknown key: `fields` are the valid ones beside it
            model = None
            continue
        model, keyed = _model_of(field.annotation)
        tagged = _tagged(field.annotation)
        fields = list(model.model_fields) if model is not None and not keyed else []
        if model is not None and not keyed:
            field = None
    return _Where(".".join(parts), field, fields)


def _written(value: Any) -> str:
    """A value as the operator wrote it (TOML spelling), cut short."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "a list"
    text = toml_value(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds(field: Any, limits: dict[str, Any]) -> str:
    """' from 1 to 6', ' of at least 0', ' over 0 and at most 600' or '': the range a setting takes."""
    found: dict[str, Any] = {}
    for item in getattr(field, "metadata", []) or []:
        for name in ("ge", "gt", "le", "lt"):
            if getattr(item, name, None) is not None:
                found[name] = getattr(item, name)
    found.update(limits)
    low = number(found["ge"]) if "ge" in found else None
    high = number(found["le"]) if "le" in found else None
    if low is not None and high is not None:
        return f" from {low} to {high}"
    pieces = []
    if low is not None:
        pieces.append(f"at least {low}")
    if "gt" in found:
        pieces.append(f"over {number(found['gt'])}")
    if high is not None:
        pieces.append(f"at most {high}")
    if "lt" in found:
        pieces.append(f"under {number(found['lt'])}")
    if not pieces:
        return ""
    return (" of " if pieces[0].startswith("at") else " ") + " and ".join(pieces)


def _is_whole(field: Any, value: Any) -> bool:
    annotation = getattr(field, "annotation", None)
    kinds = (annotation, *get_args(annotation))
    return int in kinds or (float not in kinds and isinstance(value, int))


def _choices(field: Any, expected: Any) -> str:
    """'"debug", "info", "warning" or "error"': the words a setting takes."""
    annotation = getattr(field, "annotation", None)
    for candidate in (annotation, *get_args(annotation)):
        if get_origin(candidate) is Literal:
            words = [toml_value(w) for w in get_args(candidate)]
            return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
    return str(expected or "one of the values listed in noemad.toml(5)")


# What to write, by the type pydantic wanted; a check of our own (a ValueError
# in a validator) already says what to write and is kept as is.
_NOUNS: dict[Noun, str] = {
    "whole": "a whole number", "number": "a number", "finite": "a number",
    "bool": "true or false",
    "string": 'a string in quotes such as "text"', "unicode": "valid Unicode text",
    "list": 'a list such as ["a", "b"]',
    "table": "a table of keys",
}


def _problem(problem: Problem, where: _Where) -> str:
    """What is wrong with one setting and what to write instead, as the second half of `KEY: ...`."""
    value, ctx = problem.given, problem.ctx
    given = f", not {_written(value)}"
    match problem.category:
        case "ours":
            return problem.sentence
        case "missing":
            about = str(getattr(where.field, "description", "") or "").rstrip(".")
            return f"missing; this table needs it ({about})" if about else "missing; this table needs it"
        case "type" if problem.noun is not None:
            # A number's range is said with it: "write a whole number from 1 to 6".
            bounds = _bounds(where.field, problem.limits) if problem.noun in ("whole", "number", "finite") else ""
            return f"write {_NOUNS[problem.noun]}{bounds}{given}"
        case "choice":
            return f"write {_choices(where.field, ctx.get('expected'))}{given}"
        case "bound":
            noun = "a whole number" if _is_whole(where.field, value) else "a number"
            return f"write {noun}{_bounds(where.field, problem.limits)}{given}"
        case "text_length" if problem.too_long:
            return f"write a string of at most {ctx.get('max_length')} characters, not one of {len(str(value))}"
        case "text_length":
            least = ctx.get("min_length", 1)
            return f"write a non-empty string{given}" if least == 1 else f"write a string of at least {least} characters{given}"
        case "list_length":
            most = ctx.get("max_length") if problem.too_long else ctx.get("min_length")
            bound = "at most" if problem.too_long else "at least"
            return f"write a list of {bound} {most} items, not {ctx.get('actual_length', len(value) if isinstance(value, Sized) else '?')}"
        case "pattern":
            return f"write a string of the form {ctx.get('pattern')}{given}"
        case "tag" if problem.kind == "union_tag_invalid":  # a [[minds.NAME.connectors]] table's kind
            tag = str(ctx.get("discriminator", "kind")).strip("'")
            return f"{tag} = {_written(ctx.get('tag'))} is not one this table takes; write one of {ctx.get('expected_tags')}"
        case "tag":
            return f"missing its {str(ctx.get('discriminator', 'kind')).strip(chr(39))}; write one of the kinds this table takes"
    msg = problem.msg  # a kind not met yet: pydantic's words, without its codes
    return f"{msg[:1].lower()}{msg[1:]}{given}"


def validation_problems(
    exc: ValidationError, root: type[BaseModel], prefix: str = "", hidden: frozenset[str] = frozenset()
) -> list[str]:
    """One `KEY: what to write, not what was written` per problem, keys dotted the way they appear in the file.

    The one translator of pydantic's errors for noemad.toml and a mind's
    stored settings (`mind set`, PATCH): `prefix` is where the settings sit
    (`settings` for the API's body), `hidden` top-level keys that are not
    offered there. The arms of a union failing on one value are one problem
    ("write a string in quotes or a table of keys").
    """
    found: dict[str, list[str]] = {}
    for err in exc.errors(include_url=False):
        problem = read_error(err)
        loc = problem.loc
        where = _where(loc, root, prefix)
        if problem.category == "unknown":
            fields = [f for f in where.fields if len(loc) > 1 or f not in hidden]
            near = difflib.get_close_matches(str(loc[-1]), fields, n=1)
            parent = where.key.rpartition(".")[0]
            hint = f"; did you mean '{parent + '.' if parent else ''}{toml_key(near[0])}'?" if near else ""
            found.setdefault(where.key, []).append(f"unknown key{hint} (valid here: {', '.join(fields)})")
        else:
            found.setdefault(where.key, []).append(_problem(problem, where))
    problems: list[str] = []
    for key, said in found.items():
        wants = [s.removeprefix("write ").rpartition(", not ")[0] for s in said]
        if len(said) > 1 and all(s.startswith("write ") and w for s, w in zip(said, wants)):
            said = [f"write {' or '.join(dict.fromkeys(wants))}, not {said[0].rpartition(', not ')[2]}"]
        problems.extend(f"{key}: {s}" if key else s for s in said)
    return problems


def describe_validation_error(
    exc: ValidationError, root: type[BaseModel], prefix: str = "", hidden: frozenset[str] = frozenset()
) -> str:
    """The problems of `validation_problems` as one text, each its own sentence (for the model `root`)."""
    return ". ".join(validation_problems(exc, root, prefix, hidden))
