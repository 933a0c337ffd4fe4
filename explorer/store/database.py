"""The one DuckDB file: connections, transactions, migrations.

Why short-lived connections: DuckDB lets only one process hold a read-write
connection to a file, and a second process's connect fails at once ("Could not
set lock on file"). The app, the API, a worker and the CLI share one database,
so every unit of work opens a connection, does its work and closes it.

Why turns: processes wait for the file in a queue, served in the order they
asked (:mod:`explorer.store.turns`), and a process keeps it for the units of
work of one turn. Its threads join the units under way only while no other
process waits; once one does, those under way finish, the file is let go, and
the threads that came meanwhile queue together for the next turn. Without that,
a process whose threads overlap (the API under several clients) never let the
file go, and a walk's next step took it again before anyone else could. A
program outside the queue (a plain ``duckdb.connect``) still meets DuckDB's
lock, retried with backoff. All waiting counts against ``lock_wait_s``; then
the user gets one clear line (:class:`DatabaseBusy`), not a traceback.

Why ATTACH rather than connect: starting a DuckDB instance costs 15–20 ms here
(it registers every built-in function), whatever the file, and a wander step
opens the file twice. So the process keeps one in-memory instance and ATTACHes
the file for each unit of work, DETACHing it when the last user on any thread
is done: about 3 ms, and DETACH checkpoints and releases the file lock just as
closing an instance did.

Why a unit of work may defer the checkpoint: folding the write-ahead log into
the file costs a wander step's write as much again (several fsyncs, each table
touched rewritten). A unit of work that another follows at once (a walk's next
step) may leave the log for whoever opens the file next to replay; it is folded
in once it passes ``WAL_LIMIT``, when a unit of work that does not defer ends,
or on :meth:`Database.checkpoint`, so the file alone is complete again. The fold
is an explicit CHECKPOINT before the DETACH: on a 100k-node file, DETACH's own
checkpoint was seen to stop happening after a while, without an error, and the
log grew past a megabyte, replayed by every opening (20 ms each).

Why commit hooks: the engine tells subscribers of events once they are stored
for good. A write notes what it stored (:func:`note`); the notes of a
transaction that commits are handed to :data:`commit_hooks` once the unit of
work has released the file (a listener never holds it), those of one that
rolls back are dropped. The store only keeps the list; who listens is the
engine's business (:mod:`explorer.event_stream`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import duckdb

from explorer.errors import ExplorerError, Remedy
from explorer.store import turns

DuckConnection = duckdb.DuckDBPyConnection


class Connection(Protocol):
    """A connection as the store's functions use one, on either backend: DuckDB's own, or PostgreSQL's
    :class:`~explorer.store.postgres.PgConnection` (``?`` placeholders; ``execute`` returns the connection).
    """

    def execute(self, sql: str, parameters: Any = None, /) -> Connection: ...  # noqa: D102

    def executemany(self, sql: str, parameters: Any, /) -> Connection: ...  # noqa: D102

    def fetchall(self) -> list[tuple[Any, ...]]: ...  # noqa: D102

    def fetchone(self) -> tuple[Any, ...] | None: ...  # noqa: D102


_LOCK_MARKERS = ("Could not set lock", "Conflicting lock")
# Replaying the log costs ~0.06 ms a KB when the file is opened, folding it in 10-40 ms whatever its size. A
# wander step logs ~17 KB, so this folds every 3-4 steps; 16 KB (every step) measured slower, 256 KB no faster.
WAL_LIMIT = 64 * 1024


class StoreError(ExplorerError):
    """A database problem the user can act on; the message is one clear line."""


class DatabaseBusy(StoreError):
    """Another process held the database for longer than we were willing to wait."""


class DatabaseUnavailable(StoreError):
    """The database server cannot be reached now (down, restarting, cut off): nothing of the unit of work was
    kept, and the same request may succeed once the server is back.
    """


class SchemaMismatch(StoreError):
    """The database was made by another embedding model or a newer version."""


class DatabaseMissing(StoreError):
    """There is no database file where one was only to be read (``create=False``)."""


class DatabaseCorrupt(StoreError):
    """The file is there but is not a database this program can read."""


class WriteConflict(StoreError):
    """Another unit of work wrote the same rows at the same time (a write-write conflict, or a row with the same
    key): nothing of this one was kept, and trying again is safe.
    """


class DatabaseFailure(Exception):
    """The database refused a statement for a reason the user cannot act on (a bug, or the disk): not an
    :class:`~explorer.errors.ExplorerError`, so surfaces treat it as the failure it is, in their own words.
    """


def store_error(exc: duckdb.Error) -> Exception:
    """What DuckDB's exception means, as the store says it: surfaces never see DuckDB's own classes."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, duckdb.TransactionException) or (
        isinstance(exc, duckdb.ConstraintException) and _DUPLICATE_KEY in str(exc)
    ):
        return WriteConflict(f"another process or request wrote the same data at the same time ({first}); try again")
    return DatabaseFailure(f"the database refused this: {first}")


_DUPLICATE_KEY = "Duplicate key"  # DuckDB's words for a PRIMARY KEY or UNIQUE violation


def _is_lock_error(exc: BaseException) -> bool:
    # ResourceInUse: this process opened the file some other way (duckdb.connect) and has not closed it yet
    return isinstance(exc, duckdb.ResourceInUseException) or (
        isinstance(exc, duckdb.IOException) and any(m in str(exc) for m in _LOCK_MARKERS)
    )


@dataclass
class _File:
    """One database file as this process holds it: attached under ``alias`` during ``turn`` (see
    :mod:`explorer.store.turns`), by ``users`` units of work on any thread now.
    """

    alias: str | None = None
    turn: turns.Turn | None = None
    users: int = 0
    granted: int = 0  # turns this process has had at the file: a thread that waited joins the next one
    queuing: bool = False  # a thread is queuing for the next turn on behalf of every thread that waits
    draining: bool = False  # another process waits: units of work under way finish, no new one joins
    due: bool = False  # a unit of work that did not defer the checkpoint has ended

    def open_to(self, awaited: int) -> bool:
        """Whether a thread waiting for turn ``awaited`` may join the units of work holding the file now: those
        who waited for this turn may, others only while no other process waits.
        """
        if self.alias is None or self.turn is None:
            return False
        if self.granted >= awaited:
            return True
        self.draining = self.draining or self.turn.others_waiting()
        return not self.draining

    def begin_turn(self, alias: str, turn: turns.Turn) -> None:
        """This process's turn has come and the file is attached: those who waited for it may join."""
        self.alias, self.turn, self.granted = alias, turn, self.granted + 1
        self.queuing = self.draining = False


class _Host:
    """The process's one in-memory DuckDB instance and the files attached to it (DuckDB refuses to attach a file
    twice in one process).
    """

    def __init__(self) -> None:
        self.changed = threading.Condition()  # guards all of it; notified when a file is attached or detached
        self._instance: DuckConnection | None = None
        self.files: dict[str, _File] = {}  # resolved path → its state
        self.numbers = itertools.count()

    def instance(self) -> DuckConnection:
        """The in-memory instance, started on first use (the 15–20 ms paid once per process)."""
        if self._instance is None:
            self._instance = duckdb.connect(":memory:")
        return self._instance

    def reset(self) -> None:
        """Forget the instance: a forked child must not use its parent's."""
        self.__init__()  # type: ignore[misc]


_host = _Host()
os.register_at_fork(after_in_child=_host.reset)


class _Holding(threading.local):
    """What this thread holds, over every Database: resolved path → its units of work on that file now."""

    def __init__(self) -> None:
        self.files: dict[str, int] = {}


_holding = _Holding()


def _join(file: _File, key: str) -> str:
    """Count this thread's unit of work among the file's users; the catalog name to USE."""
    assert file.alias is not None
    _holding.files[key] = _holding.files.get(key, 0) + 1
    file.users += 1
    return file.alias


CommitHook = Callable[[Path, list[Any]], None]
# Called with (database file, what its committed writes noted, in order) when a unit of work releases the file;
# a hook must not raise (a write that stood cannot be undone by a listener's trouble).
commit_hooks: list[CommitHook] = []
_units: dict[int, UnitsOfWork] = {}  # id of an open unit of work's connection → its database, for note()


def note(con: Connection, item: object) -> None:
    """Hand ``item`` to the commit hooks once what ``con`` just wrote is committed and the file released;
    never, if the transaction it was written in rolls back. A connection of no unit of work (a plain
    ``duckdb.connect``) has nobody to tell.
    """
    database = _units.get(id(con))
    if database is not None:
        database._note(item)


@contextmanager
def _in_store_words() -> Iterator[None]:
    """Raise DuckDB's exceptions as the store's (:func:`store_error`), whatever unit of work they come from."""
    try:
        yield
    except duckdb.Error as exc:
        raise store_error(exc) from exc


def migrations(package: str = "explorer.store.migrations") -> list[tuple[int, str, str]]:
    """(version, name, sql) for every file of a backend's migrations (the file's by default), in order."""
    found = []
    for entry in resources.files(package).iterdir():
        match = re.fullmatch(r"(\d{3})_(\w+)\.sql", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


def latest_version() -> int:
    """The schema version this program writes: a file newer than it is refused rather than misread."""
    return migrations()[-1][0]


def too_new(current: int, where: str | Path) -> None:
    """Refuse a database whose schema is newer than this program: it would be misread."""
    if current > latest_version():
        raise SchemaMismatch(
            f"database {where} has schema version {current}, newer than this program ({latest_version()}); "
            "upgrade Dream Explorer"
        )


def apply_migration(con: Any, version: int, name: str, sql: str, embedding_model: str, embedding_dim: int) -> None:
    """One migration's statements (``{dim}``: the embedding dimension) and its row in ``schema_version``; the
    first also records the embedding model the database is built for. The caller holds the transaction.
    """
    con.execute(sql.replace("{dim}", str(embedding_dim)))
    con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
    if version == 1:
        con.execute("INSERT INTO meta VALUES (?, ?)", ["embedding_model", embedding_model])
        con.execute("INSERT INTO meta VALUES (?, ?)", ["embedding_dim", str(embedding_dim)])


def check_embedding_model(con: Any, where: str | Path, embedding_model: str, embedding_dim: int) -> None:
    """Refuse a database built with another embedding model: its vectors would be compared with ours."""
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("embedding_model") != embedding_model or int(meta.get("embedding_dim", 0)) != embedding_dim:
        raise SchemaMismatch(
            f"database {where} was built with embeddings from {meta.get('embedding_model')} "
            f"({meta.get('embedding_dim')} dims), not {embedding_model} ({embedding_dim} dims)",
            remedy=Remedy.OTHER_DATABASE,
            subject=str(where),
        )


class Store(Protocol):
    """A database as the engine uses one, whichever the backend: the DuckDB file (:class:`Database`) or
    PostgreSQL (:class:`~explorer.store.postgres.PostgresDatabase`).
    """

    path: Path  # where this machine keeps what goes beside the database (a worker's log, the app's uploads)
    location: str  # the database as it may be shown (a URL without its password)
    create: bool
    embedding_model: str
    embedding_dim: int
    lock_wait_s: float
    fence: Fence | None

    @property
    def held(self) -> bool: ...  # noqa: D102

    def connect(self, *, checkpoint: bool = True) -> AbstractContextManager[Connection]: ...  # noqa: D102

    def transaction(self, *, fenced: bool = True) -> AbstractContextManager[Connection]: ...  # noqa: D102

    def checkpoint(self) -> None: ...  # noqa: D102

    def schema_version(self) -> int: ...  # noqa: D102

    def close(self) -> None: ...  # noqa: D102


Fence = Callable[[Connection], None]


class UnitsOfWork:
    """What both backends do alike with units of work: which one this thread is in, what its committed writes
    noted for the commit hooks (see the module's note), and the fence its transactions pass.

    Why a fence: a run may go on after someone else decided it had ended (a job failed by another worker that
    took it for dead). Whoever owns the run sets :attr:`fence`, a check run first in every transaction of this
    database object, which raises when the run may no longer write; nothing of that transaction is kept. A
    write that must land whatever became of the run (the log of calls already paid for) passes
    ``fenced=False``.
    """

    path: Path

    def __init__(self) -> None:
        self._local = threading.local()
        self.fence: Fence | None = None

    def _pass_fence(self, con: Connection, fenced: bool) -> None:
        if fenced and self.fence is not None:
            self.fence(con)

    def _enter(self, con: Any) -> None:
        _units[id(con)] = self
        self._local.con = con

    def _leave(self, con: Any) -> None:
        self._local.con = None
        del _units[id(con)]

    def _note(self, item: object) -> None:
        """Keep ``item`` with the open transaction (dropped if it rolls back), or as committed outside one."""
        in_tx = getattr(self._local, "in_tx", False)
        (self._local.pending if in_tx else self._local.committed).append(item)

    def _announce(self) -> None:
        """Tell the commit hooks what the unit of work that just released the database committed."""
        committed, self._local.committed = self._local.committed, []
        if committed:
            for hook in list(commit_hooks):
                hook(self.path, committed)

    @property
    def held(self) -> bool:
        """Whether this thread holds the database now (model calls must never run while it does)."""
        return getattr(self._local, "con", None) is not None


def scalar(con: Connection, sql: str, params: Sequence[object] = ()) -> Any:
    """The single value an aggregate query returns (a count, a max): every such query yields exactly one row."""
    row = con.execute(sql, list(params)).fetchone()
    if row is None:
        raise StoreError(f"query returned no row: {sql}")
    return row[0]


ROWS_PER_INSERT = 500  # rows per statement of insert_rows: a statement's parameters stay in the thousands


def insert_rows(
    con: Connection, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], conflict: str = ""
) -> None:
    """``rows`` into ``table``, in order, as multi-row INSERT statements (``conflict``: an ``ON CONFLICT`` clause
    ending each, a literal of the store's).

    Why not ``executemany``: DuckDB runs it as one statement per row, ~2 ms a row here (a document's handful of
    nodes and relations took 25 ms to write); one VALUES list of many rows is one statement, 3-5 times faster.
    """
    if not rows:
        return
    row = "(" + ", ".join("?" for _ in columns) + ")"
    for start in range(0, len(rows), ROWS_PER_INSERT):
        part = rows[start : start + ROWS_PER_INSERT]
        con.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([row] * len(part))} {conflict}",
            [value for values in part for value in values],
        )


class Database(UnitsOfWork):
    """A DuckDB file, created and migrated on first use.

    ``embedding_model`` and ``embedding_dim`` describe the embedder the file is
    built for: vectors are stored as ``FLOAT[dim]`` arrays, so a file made with
    one model cannot silently take vectors of another. ``create=False`` refuses a file that does not exist
    (:class:`DatabaseMissing`) before making any folder or file: for those that only read, a mistyped path
    would otherwise become a new, empty database that answers every question with nothing.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        embedding_model: str,
        embedding_dim: int,
        lock_wait_s: float = 15.0,
        create: bool = True,
    ):
        super().__init__()
        self.path = Path(path)
        self.location = str(self.path)
        self.create = create
        self.embedding_model = embedding_model
        self.embedding_dim = int(embedding_dim)
        self.lock_wait_s = lock_wait_s
        self._migrated = False

    # -- connections -------------------------------------------------------

    def _attach(self) -> str:
        """Join the units of work holding the file in this process's turn, or queue for the next turn and attach
        the file; the catalog name to USE. Everything waited here counts against ``lock_wait_s``.
        """
        key = str(self.path.resolve())
        deadline = time.monotonic() + self.lock_wait_s
        with _host.changed:
            file = _host.files.setdefault(key, _File())
            if self._wait_to_join(file, key, deadline):
                return _join(file, key)
            file.queuing = True
        try:
            alias, turn = self._take_turn(key, deadline)
        except BaseException:
            with _host.changed:
                file.queuing = False
                _host.changed.notify_all()
            raise
        with _host.changed:
            file.begin_turn(alias, turn)
            _host.changed.notify_all()
            return _join(file, key)

    def _wait_to_join(self, file: _File, key: str, deadline: float) -> bool:
        """Wait (holding ``_host.changed``) until this thread may join the units of work holding the file (true),
        or is to queue for the next turn itself, nobody else of this process doing so (false).
        """
        if _holding.files.get(key) and file.alias:  # this thread holds it through another Database: never wait
            return True
        awaited = file.granted + 1
        while not file.open_to(awaited):
            if file.alias is None and not file.queuing:
                return False
            if not _host.changed.wait(deadline - time.monotonic()):
                raise self._busy(None)
        return True

    def _take_turn(self, key: str, deadline: float) -> tuple[str, turns.Turn]:
        """Queue for the file, then attach it: the catalog name and the turn."""
        try:
            turn = turns.take(Path(key), deadline - time.monotonic())
        except OSError as exc:  # the queue's file beside the database cannot be made (a folder not writable)
            raise StoreError(f"cannot open database {self.path}: {exc.strerror or exc}") from exc
        if turn is None:
            raise self._busy(None)
        try:
            return self._attach_in_turn(key, deadline), turn
        except BaseException:
            turn.release()
            raise

    def _attach_in_turn(self, key: str, deadline: float) -> str:
        """ATTACH the file, retrying while a program outside the queue (a plain ``duckdb.connect``) holds it."""
        delay = 0.02
        while True:
            alias = f"store_{next(_host.numbers)}"
            try:
                with _host.changed:
                    cursor = _host.instance().cursor()
                try:
                    cursor.execute(f'ATTACH ? AS "{alias}"', [key])
                finally:
                    cursor.close()
            except duckdb.Error as exc:
                if "not a valid DuckDB database" in str(exc):
                    raise DatabaseCorrupt(
                        f"{self.path} is not a Dream Explorer database (nor any DuckDB file)"
                    ) from exc
                if not _is_lock_error(exc):
                    raise StoreError(f"cannot open database {self.path}: {exc}") from exc
                if time.monotonic() >= deadline:
                    raise self._busy(exc) from exc
            else:
                return alias
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.5)

    def _busy(self, failure: duckdb.Error | None) -> DatabaseBusy:
        holder = re.search(r"PID (\d+)", str(failure)) if failure else None
        who = f"another program (process {holder[1]})" if holder else "other programs"
        return DatabaseBusy(
            f"database {self.path} is busy: {who} kept it locked for "
            f"{self.lock_wait_s:.0f} s; try again, or raise EXPLORER_LOCK_WAIT"
        )

    def _detach(self, checkpoint: bool) -> None:
        """The unit of work is done: the last one out detaches the file, which frees the lock and ends this
        process's turn, and, unless every unit of work since the last detach deferred it, checkpoints the file.
        """
        key = str(self.path.resolve())
        _holding.files[key] -= 1
        with _host.changed:
            file = _host.files[key]
            file.users -= 1
            file.due = file.due or checkpoint
            if file.users:
                return
            alias, turn = file.alias, file.turn
            assert alias is not None and turn is not None
            log = Path(f"{key}.wal")
            fold = file.due or (log.exists() and log.stat().st_size > WAL_LIMIT)
            file.alias, file.turn, file.due, file.draining = None, None, False, False
            cursor = _host.instance().cursor()
            try:
                if fold:
                    with contextlib.suppress(duckdb.Error):  # the DETACH must run whatever: it frees the file
                        cursor.execute(f'CHECKPOINT "{alias}"')
                else:
                    cursor.execute("SET GLOBAL checkpoint_on_detach = 'DISABLED'")
                cursor.execute(f'DETACH "{alias}"')
            finally:
                if not fold:
                    cursor.execute("RESET GLOBAL checkpoint_on_detach")
                cursor.close()
                turn.release()
                _host.changed.notify_all()

    @contextmanager
    def connect(self, *, checkpoint: bool = True) -> Iterator[DuckConnection]:
        """A connection for one unit of work; nested calls share the open one (the outermost one's
        ``checkpoint`` counts). ``checkpoint=False``: another unit of work follows at once, so the write-ahead
        log may be left for it (see the module's note).
        """
        con = getattr(self._local, "con", None)
        if con is not None:
            with _in_store_words():
                yield con
            return
        if not self.create and not self.path.is_file():
            raise DatabaseMissing(f"there is no database at {self.path}", remedy=Remedy.CHECK_DATABASE)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file where a folder of the path should be, no permission
            why = f"{exc.filename} is a file, not a folder" if isinstance(exc, FileExistsError) else exc.strerror
            raise StoreError(f"cannot open database {self.path}: {why or exc}") from exc
        alias = self._attach()
        self._local.committed = []
        try:
            con = _host.instance().cursor()
            self._enter(con)
            try:
                con.execute(f'USE "{alias}"')
                with _in_store_words():
                    if not self._migrated:
                        self._migrate(con)
                    yield con
            finally:
                self._leave(con)
                con.close()
        finally:
            self._detach(checkpoint)
            self._announce()

    def checkpoint(self) -> None:
        """Fold any write-ahead log left by units of work that deferred it into the file, so the file alone
        holds everything (a copy of it is complete).
        """
        if Path(f"{self.path.resolve()}.wal").exists():
            with self.connect() as con:
                con.execute("CHECKPOINT")

    def close(self) -> None:
        """Nothing held between units of work: each lets the file go when it ends."""

    @contextmanager
    def transaction(self, *, fenced: bool = True) -> Iterator[DuckConnection]:
        """All of the block's writes, or none of them; first the :attr:`fence` unless not ``fenced``."""
        with self.connect() as con:
            if getattr(self._local, "in_tx", False):
                yield con
                return
            con.execute("BEGIN TRANSACTION")
            self._local.in_tx, self._local.pending = True, []
            try:
                self._pass_fence(con, fenced)
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            else:
                with _in_store_words():
                    con.execute("COMMIT")
                self._local.committed += self._local.pending
            finally:
                self._local.in_tx, self._local.pending = False, []

    # -- schema ------------------------------------------------------------

    def _migrate(self, con: DuckConnection) -> None:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        current = int(scalar(con, "SELECT coalesce(max(version), 0) FROM schema_version"))
        too_new(current, self.path)
        for version, name, sql in migrations():
            if version <= current:
                continue
            con.execute("BEGIN TRANSACTION")
            try:
                apply_migration(con, version, name, sql, self.embedding_model, self.embedding_dim)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        check_embedding_model(con, self.path, self.embedding_model, self.embedding_dim)
        self._migrated = True

    def schema_version(self) -> int:
        """The migration the file stands at; asking opens and migrates the file, so it also proves the file usable."""
        with self.connect() as con:
            return int(scalar(con, "SELECT max(version) FROM schema_version"))
