"""What the gateway learns about a mind's token-budgeted windows: the one writer of `token_ratios` and `window_anchors`.

Token budgets are estimates: a window is sized in characters, and turned
into tokens at a characters-per-token ratio (`TokenRatio`) measured for each
mind and model, since a tokenizer's density depends on what it reads (English
chat runs near 3-4 characters a token, code nearer 2.5, CJK near 1). The
ratio is calibrated from every answer to a request built on a window
(`ModelRequest.window`): the request's characters over the input the provider
reported (uncached + cache read + cache write), i.e. the whole request as the
provider counted it.

How it moves, so that a window sized by it stays under its budget:

- it starts conservatively (`START`, 2 characters a token: denser than any
  prose, so the first request of English chat uses about half its budget);
- a measurement denser than the ratio (with a 5% margin) is taken at once: an
  estimate that counts too few tokens is the costly error;
- after a request over its budget, the measured ratio is taken at once with a
  10% margin;
- a sparser measurement moves it a quarter of the way (with the 5% margin),
  so one unusual request cannot make the next one overshoot;
- a context-length error shrinks it before the next call: to the stated
  token count with the 10% margin when the provider gave one, else by half.

The ratio is stored per mind and model and survives restarts. Beside it,
per mind and role, the anchor of the window the role's last answered
request was built on (`window_anchors`): the builder starts the next window
there, so the earlier chunks stay byte-identical and the provider's prompt
cache keeps serving them (noemad.turn.window).

Both tables are measurements, not state a person changed: each write is one
the ledger already records (the model call it came from), so it is
`unrecorded` on the timeline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlite_utils import Database

from noemad.clock import iso
from noemad.models.types import WindowUse
from noemad.store.guard import unrecorded

START = 2.0  # characters a token before any measurement: conservative
LEAST, MOST = 0.3, 8.0  # the bounds a ratio is kept in (a bad report cannot make it absurd)
MARGIN = 1.05  # the ratio kept under what was measured
OVER_MARGIN = 1.10  # after a request over its budget, or too long for the model
TOWARD_SPARSER = 0.25  # the share of a sparser measurement taken at once
_REASON = "a token ratio and window anchor are measurements of a model call the ledger records"


def _bounded(value: float) -> float:
    return min(MOST, max(LEAST, value))


@dataclass(frozen=True)
class TokenRatio:
    """Characters per token for one mind and model, and how many answers it was measured on."""

    chars_per_token: float = START
    samples: int = 0

    def tokens(self, chars: int) -> int:
        """The estimated tokens of `chars` characters (rounded up)."""
        return math.ceil(chars / self.chars_per_token)

    def chars(self, tokens: int) -> int:
        """The characters that fit in `tokens` estimated tokens."""
        return int(tokens * self.chars_per_token)

    def observed(self, chars: int, tokens: int, budget: int | None = None) -> TokenRatio:
        """The ratio after a request of `chars` characters counted as `tokens` input tokens, built to `budget`."""
        if chars <= 0 or tokens <= 0:
            return self
        measured = chars / tokens
        if budget is not None and tokens > budget:
            value = measured / OVER_MARGIN
        elif measured / MARGIN < self.chars_per_token:
            value = measured / MARGIN
        else:
            value = self.chars_per_token + TOWARD_SPARSER * (measured / MARGIN - self.chars_per_token)
        return TokenRatio(_bounded(value), self.samples + 1)

    def shrunk(self, chars: int, stated_tokens: int | None) -> TokenRatio:
        """The ratio after a request of `chars` characters was refused as too long (`stated_tokens`: its count, if given)."""
        if stated_tokens and chars > 0:
            value = min(self.chars_per_token, chars / stated_tokens / OVER_MARGIN)
        else:
            value = self.chars_per_token / 2
        return TokenRatio(_bounded(value), self.samples + 1)


@dataclass(frozen=True)
class Anchor:
    """Where a role's last answered window started, and the chunk size it was cut at."""

    anchor_id: int | None
    chunk_chars: int


def ratio_for(db: Database, mind: str, model: str) -> TokenRatio:
    """The mind's stored ratio for `model`, or the conservative start."""
    row = db.execute("SELECT chars_per_token, samples FROM token_ratios WHERE mind = ? AND model = ?", [mind, model]).fetchone()
    return TokenRatio(float(row[0]), int(row[1])) if row else TokenRatio()


def calibrated(db: Database, mind: str, model: str) -> float | None:
    """The mind's characters per token for `model` once an answer has measured it (None: still the conservative start)."""
    ratio = ratio_for(db, mind, model)
    return ratio.chars_per_token if ratio.samples else None


def anchor_for(db: Database, mind: str, role: str) -> Anchor | None:
    """The anchor of the role's last answered window for the mind, if there was one."""
    row = db.execute("SELECT anchor_id, chunk_chars FROM window_anchors WHERE mind = ? AND role = ?", [mind, role]).fetchone()
    return Anchor(None if row[0] is None else int(row[0]), int(row[1])) if row else None


def _put_ratio(db: Database, mind: str, model: str, ratio: TokenRatio, now: float) -> None:
    db.execute(
        "INSERT INTO token_ratios (mind, model, chars_per_token, samples, at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (mind, model) DO UPDATE SET chars_per_token = excluded.chars_per_token,"
        " samples = excluded.samples, at = excluded.at",
        [mind, model, ratio.chars_per_token, ratio.samples, iso(now)],
    )


def learn(db: Database, mind: str, model: str, role: str, window: WindowUse, chars: int, tokens: int, now: float) -> TokenRatio:
    """After an answered request built on `window` (a writer job): calibrate the ratio and keep the anchor."""
    ratio = ratio_for(db, mind, model).observed(chars, tokens, window.budget_tokens)
    _put_ratio(db, mind, model, ratio, now)
    db.execute(
        "INSERT INTO window_anchors (mind, role, anchor_id, chunk_chars, at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (mind, role) DO UPDATE SET anchor_id = excluded.anchor_id,"
        " chunk_chars = excluded.chunk_chars, at = excluded.at",
        [mind, role, window.anchor_id, window.chunk_chars, iso(now)],
    )
    unrecorded(_REASON)
    return ratio


def shrink(db: Database, mind: str, model: str, chars: int, stated_tokens: int | None, now: float) -> TokenRatio:
    """After a request refused as too long for the model (a writer job): shrink the ratio before the next call."""
    ratio = ratio_for(db, mind, model).shrunk(chars, stated_tokens)
    _put_ratio(db, mind, model, ratio, now)
    unrecorded(_REASON)
    return ratio


def events_held(db: Database, mind: str, low: int, high: int) -> set[int]:
    """The events in [low, high] a window is anchored at; archiving keeps them."""
    rows = db.execute("SELECT anchor_id FROM window_anchors WHERE mind = ? AND anchor_id BETWEEN ? AND ?", [mind, low, high])
    return {row[0] for row in rows}
