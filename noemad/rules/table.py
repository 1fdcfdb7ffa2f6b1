"""A mind's wake rules as stored: the one writer of the `gate_rules` and `gate_minds` tables.

Every change (add, edit, remove, move, a new default, the config's seed) runs on
the writer and appends a `gate_rules_changed` event (`RulesChange`) saying
who changed what, with the rule names in order after it, so the timeline
shows how a mind's gate came to be. A rule is stored in its one JSON shape
and read back by the one validator: a row that no longer reads (written by
an older version, or by hand) is left out of `StoredRules.rules`, its
sentence listed in `.errors`, and the other rules work.

Positions here are 0-based indexes (0 is asked first; past the end means
last); the event's `position`, like the API and noemactl, counts from 1.

The config's `[minds.NAME.gate]` seeds a mind's rules once (`seed_rules`):
when the mind is created, or at the first start that finds a table for a
mind whose rules were never written. Any write marks the mind seeded, so
afterwards the stored rules win and the config's table is not read again.
A mind's rules go with it when it is deleted (the rows cascade with the
`minds` row).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlite_utils import Database

from noemad.clock import iso
from noemad.config.gate import MindGate
from noemad.errors import InvalidInput, RuleExists, RuleNotFound, RuleRefused
from noemad.events import Event, EventDraft, append, data_of
from noemad.minds import get_mind
from noemad.rules.shape import Always, Behaviour, Rule, behaviour_data, describe_behaviour, read_behaviour, read_rule

__all__ = [
    "MAX_RULES",
    "RuleExists",
    "RuleNotFound",
    "RulesChange",
    "StoredRules",
    "add_rule",
    "edit_rule",
    "move_rule",
    "remove_rule",
    "seed_from_config",
    "seed_rules",
    "seeded",
    "set_default",
    "stored_rules",
]

MAX_RULES = 500  # per mind: far past any sensible list, short of a gate that costs more than the turn it guards
Action = Literal["add", "edit", "remove", "move", "default", "seed"]


@dataclass(frozen=True)
class StoredRules:
    """A mind's rules as read from the store, in order, its default, and what did not read."""

    rules: tuple[Rule, ...] = ()
    default: Behaviour = field(default_factory=Always)
    errors: tuple[str, ...] = ()  # a sentence per stored rule (or default) left out
    notes: tuple[str, ...] = ()  # bounds read at their nearest value; resets that name no rule
    rule_notes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # by rule name: its own bounds' notes (rules show)


@dataclass(frozen=True)
class RulesChange:
    """The data of a `gate_rules_changed` event: what changed and the rule names after it."""

    action: Action
    rules: tuple[str, ...]  # every rule's name after the change, in the order they are asked
    rule: str | None = None  # the rule added, edited, removed or moved
    position: int | None = None  # where it now stands, 1 first (add, edit, move)
    body: dict[str, Any] | None = None  # the rule added, removed or as edited, in its one shape (to restore it from the timeline)
    default: dict[str, Any] | None = None  # the default behaviour set or seeded
    was: dict[str, Any] | None = None  # an edited rule as it was before (its body when stored)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action, "rules": list(self.rules)}
        for key in ("rule", "position", "body", "default", "was"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def of(cls, event: Event) -> RulesChange:
        data = data_of(event, "gate_rules_changed")
        return cls(
            action=data["action"],
            rules=tuple(data.get("rules") or ()),
            rule=data.get("rule"),
            position=data.get("position"),
            body=data.get("body"),
            default=data.get("default"),
            was=data.get("was"),
        )


def _rows(db: Database, mind: str) -> list[tuple[str, str, str]]:
    return db.execute("SELECT name, body, notes FROM gate_rules WHERE mind = ? ORDER BY position, name", [mind]).fetchall()


def stored_rules(db: Database, mind: str) -> StoredRules:
    """A mind's rules in order and its default; a row that no longer reads is left out and named in `.errors`."""
    rules: list[Rule] = []
    errors: list[str] = []
    notes: list[str] = []
    rule_notes: dict[str, tuple[str, ...]] = {}
    for name, body, stored_notes in _rows(db, mind):
        where = f"stored rule {name!r}"
        try:
            read = read_rule(json.loads(body), where, judge=True)  # a stored judge rule reads on any host; unwired, it runs as a debounce
            if read.rule.name != name:
                raise RuleRefused(f"{where}: its body is named {read.rule.name!r}")
        except (ValueError, RuleRefused) as exc:
            detail = exc.detail if isinstance(exc, RuleRefused) else f"{where}: its body is not JSON"
            errors.append(
                f"{detail}. It is left out; remove it (noemactl rules rm {mind} {name}) and add it again in today's shape"
            )
            continue
        rules.append(read.rule)
        own = _loads_list(stored_notes) + [n for n in read.notes if n not in stored_notes]
        rule_notes[name] = tuple(own)
        notes += own
    names = {r.name for r in rules}
    for rule in rules:
        for target in rule.resets:
            if target not in names:
                notes.append(f"rule {rule.name!r} resets {target!r}, which is not one of the mind's rules: it resets nothing until one is added")
    default: Behaviour = Always()
    row = db.execute("SELECT default_behaviour FROM gate_minds WHERE mind = ?", [mind]).fetchone()
    if row is not None:
        try:
            default, default_notes = read_behaviour(json.loads(row[0]), "stored default")
            notes += default_notes
        except (ValueError, RuleRefused) as exc:
            detail = exc.detail if isinstance(exc, RuleRefused) else "stored default: it is not JSON"
            errors.append(f"{detail}. The default is read as always; set it again (noemactl rules default {mind} ...)")
    return StoredRules(tuple(rules), default, tuple(errors), tuple(notes), rule_notes)


def _loads_list(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def seeded(db: Database, mind: str) -> bool:
    """Whether the mind's rules were ever written (by the config's seed or any change): the config seeds only before."""
    return db.execute("SELECT 1 FROM gate_minds WHERE mind = ?", [mind]).fetchone() is not None


def _names(db: Database, mind: str) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM gate_rules WHERE mind = ? ORDER BY position, name", [mind])]


def _renumber(db: Database, mind: str, names: Sequence[str], start: int = 0) -> None:
    db.conn.executemany(
        "UPDATE gate_rules SET position = ? WHERE mind = ? AND name = ? AND position != ?",
        [(i, mind, n, i) for i, n in enumerate(names) if i >= start],
    )


def _mark_seeded(db: Database, mind: str, now: float) -> None:
    db.execute("INSERT OR IGNORE INTO gate_minds (mind, seeded_at) VALUES (?, ?)", [mind, iso(now)])


def _record(db: Database, mind: str, change: RulesChange, actor: str, text: str, now: float) -> Event:
    return append(db, EventDraft(mind=mind, kind="gate_rules_changed", actor=actor, text=text, data=change.to_data()), now)


def _index(position: int, size: int) -> int:
    if position < 0:
        raise InvalidInput(f"position {position} is not a place in the list; 0 is asked first")
    return min(position, size)


def add_rule(
    db: Database, mind: str, rule: Rule, *, position: int | None, actor: str, now: float, notes: Sequence[str] = ()
) -> Event:
    """Add `rule` at index `position` (None or past the end: last); `RuleExists` if the name is taken (a writer job)."""
    get_mind(db, mind)
    names = _names(db, mind)
    if rule.name in names:
        raise RuleExists(
            f"mind {mind!r} already has a wake rule named {rule.name!r}; pick another name, or change it in place"
            f" (noemactl rules edit {mind} {rule.name} ...)"
        )
    if len(names) >= MAX_RULES:
        raise RuleRefused(f"mind {mind!r} has {len(names)} wake rules, the most a mind may have; remove one before adding another")
    index = len(names) if position is None else _index(position, len(names))
    names.insert(index, rule.name)
    db.execute(
        "INSERT INTO gate_rules (mind, name, position, body, notes) VALUES (?, ?, ?, ?, ?)",
        [mind, rule.name, index, json.dumps(rule.to_data(), sort_keys=True), json.dumps(list(notes))],
    )
    _renumber(db, mind, names, index + 1)
    _mark_seeded(db, mind, now)
    change = RulesChange("add", tuple(names), rule.name, index + 1, body=rule.to_data())
    text = f"wake rule {rule.name!r} added at position {index + 1}: {describe_behaviour(rule.behaviour)}"
    return _record(db, mind, change, actor, text, now)


def _no_rule(mind: str, name: str, names: list[str]) -> RuleNotFound:
    near = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f" (its rules: {', '.join(names) or 'none yet'})"
    return RuleNotFound(f"mind {mind!r} has no wake rule named {name!r}{hint}; list them with `noemactl rules list {mind}`")


def remove_rule(db: Database, mind: str, name: str, *, actor: str, now: float) -> Event:
    """Remove a rule; `RuleNotFound` if the mind has none of that name (a writer job)."""
    get_mind(db, mind)
    names = _names(db, mind)
    if name not in names:
        raise _no_rule(mind, name, names)
    (body,) = db.execute("SELECT body FROM gate_rules WHERE mind = ? AND name = ?", [mind, name]).fetchone()
    index = names.index(name)
    db.execute("DELETE FROM gate_rules WHERE mind = ? AND name = ?", [mind, name])
    names.remove(name)
    _renumber(db, mind, names, index)
    _mark_seeded(db, mind, now)
    try:
        removed = json.loads(body)
    except ValueError:
        removed = None
    change = RulesChange("remove", tuple(names), name, body=removed if isinstance(removed, dict) else None)
    return _record(db, mind, change, actor, f"wake rule {name!r} removed", now)


def edit_rule(
    db: Database, mind: str, rule: Rule, *, position: int | None = None, actor: str, now: float, notes: Sequence[str] = ()
) -> Event:
    """Replace the rule named `rule.name` with `rule` in one change (a writer job); `RuleNotFound` if there is none.

    It keeps its place, or moves to index `position` when given (past the
    end: last), so no stimulus ever meets the list without it, as one
    between a remove and an add would; the running gate keeps its counters
    by name.
    """
    get_mind(db, mind)
    names = _names(db, mind)
    if rule.name not in names:
        raise _no_rule(mind, rule.name, names)
    (body,) = db.execute("SELECT body FROM gate_rules WHERE mind = ? AND name = ?", [mind, rule.name]).fetchone()
    db.execute(
        "UPDATE gate_rules SET body = ?, notes = ? WHERE mind = ? AND name = ?",
        [json.dumps(rule.to_data(), sort_keys=True), json.dumps(list(notes)), mind, rule.name],
    )
    if position is not None:
        names.remove(rule.name)
        names.insert(_index(position, len(names)), rule.name)
        _renumber(db, mind, names)
    index = names.index(rule.name)
    _mark_seeded(db, mind, now)
    try:
        was = json.loads(body)
    except ValueError:
        was = None
    change = RulesChange("edit", tuple(names), rule.name, index + 1, body=rule.to_data(), was=was if isinstance(was, dict) else None)
    text = f"wake rule {rule.name!r} edited at position {index + 1}: {describe_behaviour(rule.behaviour)}"
    return _record(db, mind, change, actor, text, now)


def move_rule(db: Database, mind: str, name: str, *, to: int, actor: str, now: float) -> Event:
    """Move a rule to index `to` (past the end: last); `RuleNotFound` if there is none of that name (a writer job)."""
    get_mind(db, mind)
    names = _names(db, mind)
    if name not in names:
        raise _no_rule(mind, name, names)
    names.remove(name)
    index = _index(to, len(names))
    names.insert(index, name)
    _renumber(db, mind, names)
    _mark_seeded(db, mind, now)
    change = RulesChange("move", tuple(names), name, index + 1)
    return _record(db, mind, change, actor, f"wake rule {name!r} moved to position {index + 1}", now)


def set_default(db: Database, mind: str, behaviour: Behaviour, *, actor: str, now: float) -> Event:
    """Set what a stimulus no rule matches does (a writer job); any behaviour but passthrough, which is a rule's."""
    get_mind(db, mind)
    _mark_seeded(db, mind, now)
    data = behaviour_data(behaviour)
    db.execute("UPDATE gate_minds SET default_behaviour = ? WHERE mind = ?", [json.dumps(data, sort_keys=True), mind])
    change = RulesChange("default", tuple(_names(db, mind)), default=data)
    return _record(db, mind, change, actor, f"default wake behaviour set to {describe_behaviour(behaviour)}", now)


def seed_rules(
    db: Database, mind: str, rules: Sequence[Rule], default: Behaviour, *, now: float, notes: Sequence[Sequence[str]] = ()
) -> Event | None:
    """Write the config's rules and default for a mind whose rules were never written (a writer job).

    None, writing nothing, if the mind is seeded already or the config has
    nothing to seed (no rules, default always): such a mind stays unseeded, so
    a `[minds.NAME.gate]` added to the file later still seeds it once.
    `notes[i]` are the clamp notes rule i was read with.
    """
    if seeded(db, mind) or (not rules and default == Always()):
        return None
    get_mind(db, mind)
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise RuleExists(f"the rules seeded for mind {mind!r} name {', '.join(map(repr, twice))} twice; rule names are unique per mind")
    if len(rules) > MAX_RULES:
        raise RuleRefused(f"the config gives mind {mind!r} {len(rules)} wake rules; a mind may have at most {MAX_RULES}")
    db.conn.executemany(
        "INSERT INTO gate_rules (mind, name, position, body, notes) VALUES (?, ?, ?, ?, ?)",
        [
            (mind, r.name, i, json.dumps(r.to_data(), sort_keys=True), json.dumps(list(notes[i]) if i < len(notes) else []))
            for i, r in enumerate(rules)
        ],
    )
    data = behaviour_data(default)
    db.execute(
        "INSERT INTO gate_minds (mind, default_behaviour, seeded_at) VALUES (?, ?, ?)",
        [mind, json.dumps(data, sort_keys=True), iso(now)],
    )
    change = RulesChange("seed", tuple(names), default=data)
    text = f"wake rules seeded from the config: {len(rules)} rule{'s' if len(rules) != 1 else ''}, default {describe_behaviour(default)}"
    return _record(db, mind, change, "config", text, now)


def seed_from_config(db: Database, mind: str, gate: MindGate | None, *, now: float) -> Event | None:
    """`seed_rules` from a mind's `[minds.NAME.gate]` table (already read once at config load), if it has one."""
    if gate is None:
        return None
    reads, default, _ = gate.read()
    return seed_rules(db, mind, [r.rule for r in reads], default, now=now, notes=[r.notes for r in reads])
