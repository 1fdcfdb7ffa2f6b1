"""The one writer: a thread that owns the only writing connection.

Jobs are functions of the database. The thread takes every job waiting,
runs each in its own savepoint inside one `BEGIN IMMEDIATE` transaction and
commits once (group commit), then answers each caller. A job that raises is
rolled back alone; the others commit. Nothing is answered before its commit.

Stimuli go first (`run(job, first=True)`): a client waits on each one's
commit, and a mind's turn can take many milliseconds. The writer takes
what waits on the queue; the first jobs among it commit in a group of
their own, ahead of the others taken before them. Then a group of the
others runs them in the order asked until a first job waits: that one
(and any waiting with it) runs next and ends the group, sharing its
commit. So a stimulus waits for the one job under way at most, and the
others still run at least one a group: none starves. Under load stimuli
pile up while a turn runs and the next turn takes them all: fewer,
bigger turns, the cheapest way through a burst.

The guard (`noemad.store.guard`, on when `NOEMA_WRITE_GUARD=1`, as in the
tests) fails a job that changed rows of a table outside its allowlist and
appended no event: every change is recorded by its owner with an event.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from noemad.errors import ShuttingDown, StoreError, StoreFull
from noemad.store.connection import open_db
from noemad.store.guard import WriteGuard, guard_enabled, guard_of_job
from noemad.store.stats import Histogram

T = TypeVar("T")
log = logging.getLogger("noemad.store")

_MAX_GROUP = 256  # jobs per transaction: bounds the latency one commit adds
_STOP = object()
_outbox = threading.local()


def emit(item: Any) -> None:
    """Hand `item` to the commit listeners once the running job commits.

    Called by `events.append`; outside a writer job (bulk loads, tests of a
    bare connection) there is nobody to tell and it does nothing. A job that
    rolls back emits nothing.
    """
    items: list[Any] | None = getattr(_outbox, "items", None)
    if items is not None:
        items.append(item)

Job = Callable[[Database], Any]


def _nothing(db: Database) -> None:
    """A job that writes nothing: where it stands in the queue is its point (`Writer.caught_up`)."""


class _LoopAnswer:
    """Where the answer of a job `Writer.run` awaits goes: a future of the caller's event loop.

    The writer answers a group's awaited jobs with one call into each loop
    (`_answer`), rather than a thread-safe future per job chained to an
    asyncio one: at thousands of stimuli a second the locks and callbacks of
    that chain cost more CPU than the job.
    """

    __slots__ = ("loop", "future", "first")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], first: bool = False) -> None:
        self.loop = loop
        self.future = future
        self.first = first  # asked with `run(job, first=True)`

    def set_running_or_notify_cancel(self) -> bool:
        """Whether the job should run: not if its caller gave up waiting (the request went away) before it started."""
        return not self.future.cancelled()  # a flag read from another thread: at worst the job runs and its answer is dropped

    def done(self) -> bool:
        return self.future.done()


Waiter = concurrent.futures.Future[Any] | _LoopAnswer
Outcome = tuple[Waiter, bool, Any]  # the waiter, whether the job succeeded, its result or its exception


def _is_first(entry: tuple[Job, Waiter]) -> bool:
    """Whether a queued job was asked with `run(job, first=True)`."""
    waiter = entry[1]
    return isinstance(waiter, _LoopAnswer) and waiter.first


def _count_firsts(asked: list[tuple[Job, _LoopAnswer]]) -> int:
    return sum(1 for _, answer in asked if answer.first)


def _settle(answers: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """On the caller's loop: resolve the futures of one group's awaited jobs (those still awaited)."""
    for future, ok, value in answers:
        if future.done():  # cancelled while the group ran
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _answer(outcomes: list[Outcome]) -> None:
    """Answer each job of a group: a thread-safe future at once, the awaited ones with one call into each caller's loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for waiter, ok, value in outcomes:
        if isinstance(waiter, _LoopAnswer):
            by_loop.setdefault(waiter.loop, []).append((waiter.future, ok, value))
        elif ok:
            waiter.set_result(value)
        else:
            waiter.set_exception(value)
    for loop, answers in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, answers)
        except RuntimeError:  # the loop closed (between any check and this call): nobody waits on it
            pass


def _is_full(exc: BaseException) -> bool:
    """SQLITE_FULL: the disk, or the database's page limit, has no room for the write."""
    return isinstance(exc, sqlite3.OperationalError) and (
        getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)
    )


AfterCommit = Callable[[list[Any]], None]


def inserted_ids(cursor: sqlite3.Cursor, rows: int) -> range:
    """The ids of the `rows` rows one INSERT ... VALUES statement just gave, in the order of its VALUES.

    SQLite gives a statement's rows ids one after another, and in a writer job
    nothing else inserts meanwhile (the writer is alone).
    """
    last = int(cursor.lastrowid or 0)
    return range(last - rows + 1, last + 1)


@contextmanager
def savepoint(db: Database, name: str) -> Iterator[None]:
    """A part of a writer job that writes all or nothing: what it wrote is rolled back if it raises.

    For a write that checks its input as it writes (one statement that
    inserts and checks tens of thousands of rows), so that a caller that
    goes on after the error has nothing half-written.
    """
    guard = guard_of_job()
    mark = guard.mark() if guard is not None else frozenset()
    db.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        if db.conn.in_transaction:  # else SQLite rolled the whole transaction back already (a full disk)
            db.execute(f"ROLLBACK TO SAVEPOINT {name}")
            db.execute(f"RELEASE SAVEPOINT {name}")
            if guard is not None:
                guard.rewind(mark)
        raise
    db.execute(f"RELEASE SAVEPOINT {name}")


class Writer:
    """Runs write jobs on one thread, one connection, in group commits."""

    def __init__(self, path: Path | str, *, guard: bool | None = None, replicated: bool = False) -> None:
        guarded = guard_enabled() if guard is None else guard
        # The guard sees a statement's tables when it is prepared: every statement must be prepared anew.
        self.path = str(path)
        # Replicated by Litestream: it checkpoints, we never do (no autocheckpoint, no TRUNCATE at close).
        self.replicated = replicated
        self.db = open_db(path, cached_statements=0 if guarded else None, autocheckpoint=not replicated)
        self.guard = WriteGuard(self.db.conn) if guarded else None
        if guarded:
            log.info("write guard on (%s): a write job that changes rows must append an event", "NOEMA_WRITE_GUARD")
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Jobs each event loop awaits (`run`), handed over once per turn of that loop (`_hand_over`).
        self._turn: dict[asyncio.AbstractEventLoop, list[tuple[Job, _LoopAnswer]]] = {}
        self._turn_lock = threading.Lock()  # also guards `_waiting` and `_firsts`
        self._waiting = 0  # jobs asked for and not yet run
        self._firsts = 0  # jobs asked for with first=True, on the queue and not yet taken off it
        self._later: collections.deque[tuple[Job, Waiter]] = collections.deque()  # the writer thread's: taken, not first, not run
        self._stopping = False  # the writer thread's: it took the stop off the queue
        self._closed = False
        self._after_commit: list[AfterCommit] = []
        self.commits = 0
        self.jobs = 0
        self.commit_seconds = Histogram()  # BEGIN to COMMIT of each group, as the metrics show it
        self._thread = threading.Thread(target=self._loop, name="noemad-writer", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        """Whether the writer thread is running."""
        return self._thread.is_alive()

    def on_commit(self, callback: AfterCommit) -> None:
        """Call `callback(items)` on the writer thread with what each transaction emitted, in commit order."""
        self._after_commit.append(callback)

    def submit(self, job: Callable[[Database], T]) -> concurrent.futures.Future[T]:
        """Queue a job; the future resolves once its transaction has committed."""
        if self._closed:
            raise ShuttingDown("the store is closing and takes no new writes; retry once noemad is back up")
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._turn_lock:
            self._waiting += 1
        self._queue.put((job, fut))
        return fut

    async def run(self, job: Callable[[Database], T], *, first: bool = False) -> T:
        """Run a job and await its commit without blocking the event loop.

        The jobs a loop asks for in one turn go to the writer together, at the
        end of the turn: one wake-up of the writer thread, and one group (one
        commit) for the requests that arrived together, rather than a commit
        begun for the first of them while the rest are still being parsed.

        `first`: for a stimulus being stored, short and waited on by a client.
        It is committed ahead of the jobs asked without it (the module's
        docstring says how); among themselves, each kind runs in the order asked.
        """
        if self._closed:
            raise ShuttingDown("the store is closing and takes no new writes; retry once noemad is back up")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._turn_lock:
            asked = self._turn.get(loop)
            if asked is None:
                asked = self._turn[loop] = []
                loop.call_soon(self._hand_over, loop)
            asked.append((job, _LoopAnswer(loop, future, first)))
            self._waiting += 1
        return await future

    async def caught_up(self) -> None:
        """Return once every job asked for before this call has committed (or failed); nothing is written.

        Jobs asked later with first=True may have committed too.
        """
        await self.run(_nothing)

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """On `loop`, at the end of a turn: queue what it asked for in that turn, as one item."""
        with self._turn_lock:
            asked = self._turn.pop(loop, None)
            if asked:
                self._firsts += _count_firsts(asked)
                self._queue.put(asked)  # under the lock: counted as waiting no sooner than it is

    def run_sync(self, job: Callable[[Database], T]) -> T:
        """Run a job and wait for its commit (for code outside the event loop)."""
        return self.submit(job).result()

    def close(self) -> None:
        """Finish every queued job, checkpoint the WAL (unless Litestream does) and close the connection."""
        if self._closed:
            return
        self._closed = True
        with self._turn_lock:  # asked before the close, not handed over yet: run before the stop, as queued jobs are
            for asked in self._turn.values():
                self._firsts += _count_firsts(asked)
                self._queue.put(asked)
            self._turn.clear()
        self._queue.put(_STOP)
        self._thread.join()
        if self.replicated:
            # A TRUNCATE here would reset the WAL before Litestream has copied its last frames:
            # Litestream syncs them as it stops, after us, and checkpoints at its next start.
            self.db.close()
            return
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:  # a reader may still hold the WAL; the data is safe either way
            log.warning("WAL checkpoint at close did not complete: %s", exc)
        self.db.close()

    def _loop(self) -> None:
        while True:
            firsts = self._take(block=not self._later)  # with jobs of its own to run, the writer only looks for more
            if firsts:
                self._commit_group(iter(firsts))  # alone: they wait for no other job
            if self._later:
                self._commit_group(self._others())  # at least one of them between two groups of firsts: none starves
            elif not firsts:
                return  # stopping (else `_take` waited for a job)

    def _take(self, *, block: bool) -> list[tuple[Job, Waiter]]:
        """Take the jobs on the queue off it: the first ones returned, the others put behind `_later`."""
        firsts: list[tuple[Job, Waiter]] = []
        while not self._stopping and len(firsts) < _MAX_GROUP:  # lists are kept whole: one may take a group past it
            try:
                item = self._queue.get() if block else self._queue.get_nowait()
            except queue.Empty:
                break
            block = False
            if item is _STOP:
                self._stopping = True
                break
            for entry in item if isinstance(item, list) else (item,):  # a list: what one loop asked in one turn
                (firsts if _is_first(entry) else self._later).append(entry)
        if firsts:
            with self._turn_lock:
                self._firsts -= len(firsts)
        return firsts

    def _others(self) -> Iterator[tuple[Job, Waiter]]:
        """A group of the jobs not first, in the order asked, until a first one waits: that one, and any waiting with
        it, end the group (they wait for the one job under way, and share its commit)."""
        others = 0
        while self._later and others < _MAX_GROUP:
            if others and self._firsts:  # read without the lock: at worst it is seen at the next job
                yield from self._take(block=False)
                return
            others += 1
            yield self._later.popleft()

    @property
    def queued(self) -> int:
        """Jobs waiting for the writer: asked for and not yet run."""
        return self._waiting

    def _commit_group(self, group: Iterator[tuple[Job, Waiter]]) -> None:
        """Run a group's jobs in one transaction, then commit and answer them."""
        conn = self.db.conn
        began = time.perf_counter()
        outcomes: list[Outcome] = []
        emitted: list[Any] = []
        taken: list[tuple[Job, Waiter]] = []
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                err = StoreFull(self.path) if _is_full(exc) else StoreError(f"cannot start a write: {exc}")
                taken.extend(group)
                _answer([(fut, False, err) for _, fut in taken])
                return
            for job, fut in group:
                taken.append((job, fut))
                if not fut.set_running_or_notify_cancel():
                    continue
                if job is _nothing:  # `caught_up`: its place in the queue is all it asks for
                    outcomes.append((fut, True, None))
                    continue
                conn.execute("SAVEPOINT job")
                _outbox.items = []
                try:
                    if self.guard is not None:
                        self.guard.begin()
                    result = job(self.db)
                    if self.guard is not None:
                        self.guard.check(appended=bool(_outbox.items), job=job)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller, not swallowed
                    if not conn.in_transaction:
                        # SQLite rolled the whole transaction back (a full disk does): the jobs this group
                        # ran before are gone too. Fail the group rather than the thread, with the jobs it
                        # had still to run (a first one taken off the queue is answered, never dropped).
                        taken.extend(group)
                        self._fail_group(taken, StoreFull(self.path) if _is_full(exc) else exc)
                        return
                    conn.execute("ROLLBACK TO SAVEPOINT job")
                    conn.execute("RELEASE SAVEPOINT job")
                    # A full disk is the operator's to fix, not a bug: the caller answers it as such (507).
                    outcomes.append((fut, False, StoreFull(self.path) if _is_full(exc) else exc))
                else:
                    conn.execute("RELEASE SAVEPOINT job")
                    outcomes.append((fut, True, result))
                    emitted.extend(_outbox.items)
                finally:
                    _outbox.items = None
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK") if conn.in_transaction else None
                err = StoreFull(self.path) if _is_full(exc) else StoreError(f"the write could not be committed: {exc}; nothing of it was stored")
                _answer([(fut, False, err) for fut, _, _ in outcomes])
                return
        finally:
            with self._turn_lock:
                self._waiting -= len(taken)
        self.commits += 1
        self.commit_seconds.observe(time.perf_counter() - began)
        if emitted:
            for callback in self._after_commit:
                try:
                    callback(emitted)
                except Exception:  # a listener must never undo or block a commit
                    log.exception("after-commit listener failed")
        self.jobs += sum(1 for _, ok, _ in outcomes if ok)
        _answer(outcomes)

    @staticmethod
    def _fail_group(batch: list[tuple[Job, Waiter]], exc: BaseException) -> None:
        """Answer every job of a group whose transaction is lost with `exc`: none of it was stored."""
        _answer([(fut, False, exc) for _, fut in batch if not fut.done()])
