"""The token-budgeted window: the conversation a model call reads, sized to a budget and shaped for the prompt cache.

One builder for every caller that shows a model the mind's conversation: the
respond call (noemad.turn.context) and the reply judge (noemad.gate) read the
same window, each at its own budget. Building it reads the store and writes
nothing to it; it remembers in memory the last window it built for each
mind and role, and reads only the events after it (events never change, so
the result is the one a build from scratch gives: 3 ms instead of ~10 at
60K tokens, bench/judge.py).

For a caller: `window(db, mind, budget_tokens, ratio, role=, render=)` gives
a `Window`: its `entries` (each event as a lean `Said`, its rendered text),
its `chunks`, `anchor_id`, `estimated_tokens`, `text`, `blocks(ttl,
breakpoints)` for the request, and `use(budget)` for `Prompt.window`, which
has the gateway calibrate the ratio and keep the anchor from the answer.

What it holds. The conversation is the mind's messages, observations and
replies, oldest first, as whole messages (a message longer than half the
budget is cut to that, with a note: the newest one must fit). It starts at an
*anchor*, an event that stays put while the window grows into its budget
with each request, so everything before the newest messages is the same from
one request to the next. Only when the window from the anchor outgrows the
budget does the anchor move, forward, to where the window fills 65% of the
budget: the next 35% of growth again leaves the start alone. The anchor of a
role's last answered request is kept (noemad.models.ratios), so the next
window starts there; with none, the window starts at the mind's first event,
or at 65% of the budget if the conversation is longer than that.

Chunks. From the anchor the messages fall into chunks of about 6,000 tokens
(`CHUNK_TOKENS`, in characters at the ratio of the moment the anchor was set,
kept with it so that later calibrations do not move a boundary). Every chunk
but the last is full, and its bytes never change while the anchor stays.
Each message is a block of its own: a chunk filling up then changes no
block, so nothing already cached is written again (one block per chunk would
re-write the whole chunk the moment its last message arrived, measured at
about 1% of the cache share over bench/judge.py's run).

Cache breakpoints (`Window.blocks`, `breakpoint_indexes`). Providers cache a
prompt's prefix up to a breakpoint; a later request reads it when its prefix
up to one of its own breakpoints, or up to one of the ~20 block boundaries
before that breakpoint, is byte-identical. So:

- one breakpoint after the last full chunk: stable until the next chunk fills,
  written by the request that fills it (its last message is new), and the
  entry a request falls back to after a burst too long for the others;
- one at the end of the conversation: the next request, a few messages
  longer, finds this one's entry among the boundaries before its own end and
  reads the whole previous conversation from the cache instead of re-sending
  the growing tail uncached;
- with breakpoints to spare, one every 16 blocks back from the end, so a
  request that comes after a burst of up to 16 more messages per spare
  breakpoint still finds the previous end.

The API takes four breakpoints per request: the respond call uses one for
its persona and three here; `breakpoints=1` keeps only the one after the
last full chunk. The spec's single-breakpoint scheme (one block a chunk, the
tail uncached) reads 94.4% of its input from the cache over bench/judge.py's
run, against 98.9% for these; the difference is the growing tail, which the
end breakpoint lets the next request read instead of re-sending.
A prefix shorter than the model's minimum is not cached at all (4,096 tokens
on Claude Haiku and Opus, 1,024 on Sonnet): a window smaller than that costs
its full input price on every request, and its breakpoints do nothing until
the conversation passes the minimum.

Budgets are estimates: characters turned into tokens at the mind's
calibrated ratio for the model (`TokenRatio`, noemad.models.ratios). A
request built on a window carries `Window.use(...)` so the gateway calibrates
the ratio from the answer and keeps the anchor.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from sqlite_utils import Database

from noemad.models import Block
from noemad.models.ratios import Anchor, TokenRatio, anchor_for
from noemad.models.types import CacheTTL, WindowUse
from noemad.stimuli import conversation_after, conversation_before

CHUNK_TOKENS = 6_000  # a full chunk's size: where the chunk breakpoint moves to next
REGROW = 0.65  # where a moved anchor leaves the window, as a share of the budget
MESSAGE_SHARE = 0.5  # the most of the budget one message may take
SPACING = 16  # blocks between spare breakpoints: inside the ~20 boundaries a provider looks back over
CUT = " […cut to fit the window]"
_PAGE = 512  # events read at a time, newest first


class Said(NamedTuple):
    """One message of the conversation, as a window reads it (lean: no links, no data; a tuple, thousands are read)."""

    id: int
    kind: str  # message, observation or reply
    who: str  # a message's author, an observation's source, the mind for its own reply
    channel: str | None
    text: str
    at: str


Render = Callable[[Said], str]


def plain_line(said: Said) -> str:
    """The default rendering, one message a line: who said it, where, and what (not forgery-proof: a judge escapes)."""
    if said.kind == "message":
        return f"{said.who} ({said.channel}): {said.text}"
    if said.kind == "observation":
        return f"[observation from {said.who}] {said.text}"
    return f"{said.who} (reply): {said.text}"


class Entry(NamedTuple):
    """A message in the window: as stored, as rendered (cut to fit if it had to be), and its size with its line break."""

    said: Said
    text: str
    size: int
    cut: bool


def _entry(said: Said, render: Render, limit: int) -> Entry:
    if len(said.text) <= limit:
        text = render(said)
        return Entry(said, text, len(text) + 1, False)
    keep = max(0, limit - len(CUT))
    text = render(said._replace(text=said.text[:keep] + CUT))
    return Entry(said, text, len(text) + 1, True)


@dataclass(frozen=True)
class Chunk:
    """Consecutive entries `start:end` of a window; `full` once they reached the chunk size."""

    start: int
    end: int
    full: bool


@dataclass(frozen=True)
class Window:
    """The conversation a call reads: entries from the anchor, cut into chunks."""

    mind: str
    entries: tuple[Entry, ...]  # oldest first
    chunks: tuple[Chunk, ...]  # every chunk but the last is full
    anchor_id: int | None  # the first entry's event (None: no conversation yet)
    chunk_chars: int
    budget_tokens: int
    ratio: TokenRatio
    moved: bool  # the anchor is not the one the role's last answered request used

    @property
    def chars(self) -> int:
        return sum(e.size for e in self.entries)

    @property
    def estimated_tokens(self) -> int:
        """The window's size in tokens, estimated at its ratio (an estimate, never a count)."""
        return self.ratio.tokens(self.chars)

    @property
    def text(self) -> str:
        """The whole window as plain text, exactly the blocks' texts joined."""
        return "".join(block.text for block in self.blocks(breakpoints=0))

    @property
    def last_full(self) -> int | None:
        """The index of the last entry of the last full chunk, if a chunk is full."""
        full = [c for c in self.chunks if c.full]
        return full[-1].end - 1 if full else None

    def blocks(self, ttl: CacheTTL = "5m", breakpoints: int = 3) -> tuple[Block, ...]:
        """The window as text blocks, one per message, with at most `breakpoints` cache breakpoints (see the module)."""
        marks = breakpoint_indexes(len(self.entries), self.last_full, breakpoints)
        return tuple(Block(e.text + "\n", ttl if i in marks else None) for i, e in enumerate(self.entries))

    def use(self, budget_tokens: int) -> WindowUse:
        """What a request built on this window tells the gateway; `budget_tokens` is the whole request's input budget."""
        return WindowUse(budget_tokens=budget_tokens, anchor_id=self.anchor_id, chunk_chars=self.chunk_chars)


def breakpoint_indexes(count: int, last_full: int | None, breakpoints: int) -> frozenset[int]:
    """Which of `count` blocks get a cache breakpoint, at most `breakpoints`, `last_full` the last full chunk's block.

    One: after the last full chunk only (the single-breakpoint scheme). More:
    that one, the end, then one every `SPACING` blocks back from the end.
    """
    if count == 0 or breakpoints <= 0:
        return frozenset()
    if breakpoints == 1:
        return frozenset() if last_full is None else frozenset({last_full})
    marks: list[int] = [] if last_full is None else [last_full]
    end = count - 1
    while len(marks) < breakpoints and end >= 0 and (last_full is None or end > last_full):
        marks.append(end)
        end -= SPACING
    return frozenset(marks)


def _newest_first(db: Database, mind: str, before: int) -> Iterator[Said]:
    """The mind's conversation before id `before`, newest first, read a page at a time as the caller goes back."""
    while True:
        rows = conversation_before(db, mind, before, _PAGE)
        yield from map(Said._make, rows)
        if len(rows) < _PAGE:
            return
        before = rows[-1][0]


# What the last window of each (database, mind, role) held, oldest first up to the newest event it
# read. Events never change once written, so the next build reads only what came after and reuses the
# rest: the window's text is the same as a build from scratch, at a fraction of the cost (bench/judge.py).
# Renderers are often closures made anew for each build, so whether this one renders as the last one
# did is asked of the renderer itself: it must give the remembered texts of the first and last entries.
_MEMO: OrderedDict[tuple[str, str, str], tuple[Entry, ...]] = OrderedDict()
_MEMO_SIZE = 64
_memo_lock = threading.Lock()


def _database(db: Database) -> str:
    (_, _, path) = db.execute("PRAGMA database_list").fetchone()
    return str(path) or f"memory:{id(db.conn)}"


def _remembered(db: Database, key: tuple[str, str, str], render: Render) -> tuple[tuple[Entry, ...], list[Said]]:
    """The memo's entries for `key` still valid for `render`, and the conversation after them (oldest first)."""
    with _memo_lock:
        known = _MEMO.get(key, ())
    probes = [e for e in (known[:1] + known[-1:]) if not e.cut]
    if not probes or any(render(e.said) != e.text for e in probes):
        return (), []  # nothing remembered, or it was rendered otherwise
    first = known[0].said.id
    if db.execute("SELECT 1 FROM events WHERE id = ? AND mind = ?", [first, key[1]]).fetchone() is None:
        return (), []  # the mind was deleted (and maybe made anew) since
    newer = conversation_after(db, key[1], known[-1].said.id, _PAGE + 1)
    if len(newer) > _PAGE:
        return (), []  # much has happened since: read it newest first instead
    return known, [Said._make(row) for row in newer]


def _remember(key: tuple[str, str, str], entries: tuple[Entry, ...]) -> None:
    with _memo_lock:
        _MEMO[key] = entries
        _MEMO.move_to_end(key)
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)


_STORED: Final = Anchor(-1, -1)  # "read the role's stored anchor"


def window(
    db: Database,
    mind: str,
    budget_tokens: int,
    ratio: TokenRatio | float,
    *,
    role: str = "judge",
    render: Render = plain_line,
    anchor: Anchor | None = _STORED,
) -> Window:
    """The mind's conversation within `budget_tokens` (estimated at `ratio`), from the role's anchor; writes nothing.

    `anchor` defaults to the one the role's last answered request used (None:
    start afresh). `render` turns each message into its text; sizes are
    measured on what it returns, so a caller renders with it, not afterwards.
    It must render an event the same way every time (no nonce): that is what
    keeps the cached prefix, and what lets the next build reuse this one.
    """
    ratio = ratio if isinstance(ratio, TokenRatio) else TokenRatio(float(ratio))
    stored = anchor_for(db, mind, role) if anchor is _STORED else anchor
    floor = stored.anchor_id if stored is not None and stored.anchor_id is not None else 0
    budget_chars = max(1, ratio.chars(budget_tokens))
    limit = max(1, int(budget_chars * MESSAGE_SHARE))
    key = (_database(db), mind, role)
    known, newer = _remembered(db, key, render)
    taken: list[Entry] = []  # newest first
    total = 0
    outgrown = False

    def take(entry: Entry) -> bool:
        nonlocal total, outgrown
        if total + entry.size > budget_chars and taken:
            outgrown = True
            return False
        taken.append(entry)
        total += entry.size
        return True

    def older() -> Iterator[Entry]:
        """Every entry, newest first: what came after the memo, the memo, then the store before it."""
        for said in reversed(newer):
            yield _entry(said, render, limit)
        for entry in reversed(known):
            yield entry if not entry.cut and len(entry.said.text) <= limit else _entry(entry.said, render, limit)
        for said in _newest_first(db, mind, known[0].said.id if known else 1 << 62):
            yield _entry(said, render, limit)

    for entry in older():
        if entry.said.id < floor or not take(entry):
            break  # the window reaches back to its anchor and no further, or is full
    if outgrown:
        # The anchor moves forward to where the window fills REGROW of the budget.
        keep, size = 0, 0
        while keep < len(taken) and size + taken[keep].size <= budget_chars * REGROW:
            size += taken[keep].size
            keep += 1
        taken = taken[: max(1, keep)]
    entries = tuple(reversed(taken))
    if entries:
        _remember(key, entries)
    anchor_id = entries[0].said.id if entries else None
    kept = stored is not None and stored.anchor_id == anchor_id and stored.chunk_chars > 0
    chunk_chars = stored.chunk_chars if kept and stored is not None else max(1, ratio.chars(CHUNK_TOKENS))
    return Window(
        mind=mind,
        entries=entries,
        chunks=_chunks(entries, chunk_chars),
        anchor_id=anchor_id,
        chunk_chars=chunk_chars,
        budget_tokens=budget_tokens,
        ratio=ratio,
        moved=not kept,
    )


def _chunks(entries: Sequence[Entry], chunk_chars: int) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    start, size = 0, 0
    for i, entry in enumerate(entries):
        size += entry.size
        if size >= chunk_chars:
            chunks.append(Chunk(start, i + 1, True))
            start, size = i + 1, 0
    if start < len(entries):
        chunks.append(Chunk(start, len(entries), False))
    return tuple(chunks)
