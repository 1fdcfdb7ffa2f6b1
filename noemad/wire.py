"""Wire objects: a record's dataclass is the one definition of the JSON the API shows.

A dataclass marked `@wire` is read by pydantic for both sides of the wire:
the OpenAPI schema (its fields, their types, the docstring under each field
as its description) and the JSON (`dump`, `dump_json`, or FastAPI given the
dataclass as a `response_model`). What the JSON shows beyond the fields is
declared on the dataclass once, with the markers below: a derived value
(`computed`), a field shown under another name (`renamed`), a field kept
out of the JSON (`HIDDEN`) or left out when it is None or empty
(`OMIT_NONE`, `OMIT_EMPTY`), a value shown through a function (`shown_as`,
`rounded`), an epoch time shown as ISO (`IsoTime`). There is no second list of the fields
to keep in step, so the schema and the answers cannot drift apart.

Serialising does not validate: the objects were built by the code that owns
them, and pydantic-core writes them straight to JSON, faster than building
a dict and handing it to `json.dumps` (a causal walk of ~180 events: 0.5 ms
against 1.5 ms), and FastAPI's response check passes a dataclass instance
through as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, TypeAdapter, computed_field, create_model

from noemad.clock import iso

__all__ = [
    "HIDDEN", "OMIT_EMPTY", "OMIT_NONE", "STAMPED", "Asked", "IsoTime", "body", "computed", "dump", "dump_json", "extend", "from_body",
    "renamed", "rounded", "shown_as", "wire",
]

T = TypeVar("T", bound=type)
R = TypeVar("R")


def _docs_in(tree: ast.Module) -> dict[str, dict[str, str]]:
    """The docstring under each field of each class in `tree`: {class qualname: {field: text}}."""
    found: dict[str, dict[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                qualname = prefix + node.name
                docs = found.setdefault(qualname, {})
                for stmt, after in zip(node.body, node.body[1:]):
                    if (
                        isinstance(stmt, ast.AnnAssign)
                        and isinstance(stmt.target, ast.Name)
                        and isinstance(after, ast.Expr)
                        and isinstance(after.value, ast.Constant)
                        and isinstance(after.value.value, str)
                    ):
                        docs[stmt.target.id] = inspect.cleandoc(after.value.value)
                visit(node.body, qualname + ".")

    visit(tree.body, "")
    return found


@cache
def _field_docs(module: str) -> dict[str, dict[str, str]]:
    """The docstring under each field of each class in `module`'s source: {class qualname: {field: text}}.

    Read once per module. pydantic can read these itself
    (`use_attribute_docstrings`), but it reads the source of a stdlib
    dataclass again for every schema it builds (each API route, each `dump`
    adapter): half of building the API was spent re-parsing the same files,
    at every daemon start.
    """
    return _docs_in(ast.parse(inspect.getsource(sys.modules[module])))


@cache
def _source_lines(module: str) -> list[str]:
    return inspect.getsource(sys.modules[module]).splitlines(keepends=True)


@cache
def _class_docs(module: str, top: str) -> dict[str, dict[str, str]]:
    """As `_field_docs`, from the lines of `module`'s top-level class `top` alone (and the classes nested in it).

    Parsing each module whole was most of what defining wire classes cost at
    every daemon start (some 60 ms of CPU for 30 modules, most of their text
    functions); a class's own lines are a fraction of that. Its lines run
    from `class Top` at the margin to the next line at the margin that is not
    a comment or a closing bracket. Where they cannot be told (no such line, or
    lines that do not parse, as when a string inside starts at the margin), the
    module is parsed whole, as before.
    """
    lines = _source_lines(module)
    header = re.compile(rf"class {re.escape(top)}\b")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is not None:
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#)]"):
            end += 1
        try:
            return _docs_in(ast.parse("".join(lines[start:end])))
        except SyntaxError:
            pass
    return _field_docs(module)


def _describe_fields(cls: type) -> None:
    """Give each field the class declares the docstring under it as its schema description.

    The description goes in the field's metadata, where pydantic reads it; a
    subclass shares its base's field objects, so inherited fields keep theirs.
    A description given explicitly (`Field(description=...)`) stands.
    """
    docs = _class_docs(cls.__module__, cls.__qualname__.split(".")[0]).get(cls.__qualname__, {})
    for name, field in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if name in docs and "description" not in field.metadata and name in cls.__dict__.get("__annotations__", {}):
            field.metadata = types.MappingProxyType({**field.metadata, "description": docs[name]})


computed = computed_field  # a property the JSON shows as a field (after the dataclass's own fields)
HIDDEN = Field(exclude=True)  # `Annotated[bool, HIDDEN]`: a field the JSON leaves out
OMIT_NONE = Field(exclude_if=lambda value: value is None)  # a field the JSON leaves out while it is None
OMIT_EMPTY = Field(exclude_if=lambda value: not value)  # a field the JSON leaves out while it is empty
IsoTime = Annotated[float, PlainSerializer(iso, return_type=str)]  # epoch seconds, shown as an ISO time


def shown_as(show: Callable[[Any], Any]) -> Any:
    """`Annotated[str, shown_as(clip)]`: the field is shown as `show` gives it."""
    return PlainSerializer(show)


def rounded(digits: int) -> Any:
    """`Annotated[float, rounded(4)]`: the field is shown rounded to `digits` places (an int stays an int, as round() leaves it)."""
    return shown_as(lambda value: round(value, digits))


def renamed(name: str) -> Any:
    """`Annotated[int, renamed("from")]`: the field is shown as `name` (a keyword, say)."""
    return Field(serialization_alias=name)


def wire(cls: T) -> T:
    """Mark a dataclass as a wire object: the docstring under each field describes it in the schema."""
    _describe_fields(cls)
    return cls


def extend(obj: object, cls: Callable[..., R], **more: Any) -> R:
    """`obj` as `cls`, a subclass that adds the fields `more` (what one API answer shows beyond the record)."""
    return cls(**vars(obj), **more)


# One adapter per class, built on first use. A plain dict rather than functools.cache: mypy does not
# take a class for the Hashable that cache's wrapper asks of its arguments.
_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def dump(obj: object) -> Any:
    """`obj` as the JSON-ready value the API shows (dicts, lists, strings, numbers)."""
    return _adapter(type(obj)).dump_python(obj, mode="json", by_alias=True)


def dump_json(obj: object) -> bytes:
    """`obj` as the JSON the API answers."""
    return _adapter(type(obj)).dump_json(obj, by_alias=True)


# Request bodies. ------------------------------------------------------------------
# A record that arrives in a request body (a stimulus) declares what the body
# holds on its own fields: `body` derives the pydantic model the API validates
# (and documents) from them, and `from_body` turns a validated body into the
# record. Two markers say where the body differs from the record.


class _Stamped:
    def __repr__(self) -> str:
        return "STAMPED"


STAMPED = _Stamped()  # `Annotated[str | None, STAMPED]`: set by the daemon (who stored it), never taken from a body


@dataclass(frozen=True)
class Asked:
    """`Annotated[float, Asked("due", DueText, parse_due, "...")]`: a body gives the field as `name`, of type `annotation`,
    and `resolve(value, now)` (the daemon's clock) makes the field's value of it."""

    name: str
    annotation: Any
    resolve: Callable[[Any, float], Any]
    description: str


@dataclass(frozen=True)
class _Taken:
    """How one field of a record is taken from its body."""

    field: str
    given_as: str
    resolve: Callable[[Any, float], Any] | None
    as_tuple: bool
    nested: bool  # a record that has its own body (a stimulus' claim)


_TAKEN: dict[type[BaseModel], tuple[type, tuple[_Taken, ...]]] = {}
_BODIES: dict[type, type[BaseModel]] = {}  # each record's body, for the records that nest it


def _nested(inner: Any) -> Any:
    """`inner` with a record that has a body (alone or in a union, `Claim | None`) replaced by that body; None if there is none."""
    if inner in _BODIES:
        return _BODIES[inner]
    args = get_args(inner)
    if get_origin(inner) in (types.UnionType, Union) and any(a in _BODIES for a in args):
        return cast(Any, Union)[tuple(_BODIES.get(a, a) for a in args)]
    return None


def _split(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """A type hint's type and its `Annotated` metadata."""
    if get_origin(hint) is Annotated:
        inner, *meta = get_args(hint)
        return inner, tuple(meta)
    return hint, ()


def body(cls: type, title: str, config: ConfigDict, **fixed: Any) -> type[BaseModel]:
    """The request body that asks for the record `cls`, named `title` in the schema.

    Its fields are the record's, in order, with their types, constraints,
    defaults and descriptions, but for a `STAMPED` field (left out) and an
    `Asked` one (asked for under its own name and type). A tuple is asked for
    as a JSON array (a list: strict validation takes no list for a tuple).
    `fixed` are literal fields put first: `kind="message"` makes the body
    carry `"kind": "message"`, for a discriminated union of bodies.
    """
    hints = get_type_hints(cls, include_extras=True)
    asked: dict[str, Any] = {name: (Literal[value], ...) for name, value in fixed.items()}
    taken: list[_Taken] = []
    for f in dataclasses.fields(cls):
        inner, meta = _split(hints[f.name])
        if STAMPED in meta:
            continue
        asked_as = next((m for m in meta if isinstance(m, Asked)), None)
        if asked_as is not None:
            asked[asked_as.name] = (asked_as.annotation, Field(description=asked_as.description))
            taken.append(_Taken(f.name, asked_as.name, asked_as.resolve, False, False))
            continue
        as_tuple = get_origin(inner) is tuple
        nested = _nested(inner)
        if nested is not None:
            inner = nested
        elif as_tuple:
            args = get_args(inner)
            inner = list[args[0]]  # type: ignore[valid-type]
        annotation = cast(Any, Annotated)[(inner, *meta)] if meta else inner
        info: dict[str, Any] = {}
        if "description" in f.metadata:
            info["description"] = f.metadata["description"]
        if f.default is not dataclasses.MISSING:
            if as_tuple:
                info["default_factory"] = list
            else:
                info["default"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            info["default_factory"] = f.default_factory
        asked[f.name] = (annotation, Field(**info))
        taken.append(_Taken(f.name, f.name, None, as_tuple, nested is not None))
    model: type[BaseModel] = create_model(title, __config__=config, __doc__=cls.__doc__, __module__=cls.__module__, **asked)
    _TAKEN[model] = (cls, tuple(taken))
    _BODIES.setdefault(cls, model)
    return model


def from_body(given: BaseModel, now: float) -> Any:
    """The record a validated body (of a model `body` made) asks for; `now` is the daemon's clock, for `Asked` fields."""
    cls, taken = _TAKEN[type(given)]
    values: dict[str, Any] = {}
    for t in taken:
        value = getattr(given, t.given_as)
        if t.resolve is not None:
            value = t.resolve(value, now)
        elif t.as_tuple:
            value = tuple(value)
        elif t.nested and value is not None:
            value = from_body(value, now)
        values[t.field] = value
    return cls(**values)
