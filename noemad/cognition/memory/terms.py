"""A query cut into terms for FTS5, and the terms too common to tell a mind's memories apart dropped (see the package docstring)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from sqlite_utils import Database

from noemad.cognition.memory.model import COMMON_MIN_DOCS, IDS_SQL, MAX_TERMS
from noemad.words import content_words, porter_stems


def query_terms(text: str) -> list[str]:
    """The words of `text` retrieval searches for, in order of first appearance.

    Lower-cased runs of letters and digits, without stop-words, one-character
    words and repeats; at most `MAX_TERMS`.
    """
    terms: dict[str, None] = {}
    for word in content_words(text):
        terms[word] = None
        if len(terms) == MAX_TERMS:
            break
    return list(terms)


def informative_terms(db: Database, mind: str, terms: Sequence[str]) -> list[str]:
    """`terms` without those in at least half of the mind's memories (see the module docstring)."""
    return informative_counted(db, mind, terms)[0]


def informative_counted(db: Database, mind: str, terms: Sequence[str]) -> tuple[list[str], int]:
    """`informative_terms`, and the mind's count of memories it read for them (0 without terms)."""
    if not terms:
        return [], 0
    stems = porter_stems(terms)
    counts = dict(db.execute(_TERM_DOCS_SQL, [mind, json.dumps(["", *sorted(set(stems))])]).fetchall())
    total = counts.get("", 0)
    if total <= COMMON_MIN_DOCS:
        return list(terms), total
    return [t for t, stem in zip(terms, stems) if not (counts.get(stem, 0) > COMMON_MIN_DOCS and 2 * counts[stem] >= total)], total


def fts_query(terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH expression that ORs `terms`, each quoted; None if there are none.

    Each term is an FTS5 string ("..." with inner quotes doubled), which FTS5
    only tokenizes and never reads as syntax, so nothing a user typed can
    become an operator, a column filter or a prefix query.
    """
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms if term]
    return " OR ".join(quoted) if quoted else None


_TERM_DOCS_SQL = f"SELECT term, docs FROM memory_terms WHERE mind = ? AND term IN {IDS_SQL}"
