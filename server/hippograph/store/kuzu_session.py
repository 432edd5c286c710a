"""One Kùzu connection: bound statements prepared once, transactions with after-commit hooks.

Every ``$param`` of a statement must be bound: kuzu 0.11.3 treats an unbound parameter in a
WHERE as matching every row, which would turn an update or delete of one fact into one of all
of them, so ``run`` refuses such a call. Besides single statements, the session reads whole
tables as columns (Arrow) and builds the batched writes (``for_each``) that kuzu plans well.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import ladybug

from hippograph.domain.errors import GraphCacheFull, InternalError, StoreError
from hippograph.store import kuzu_statements as statements
from hippograph.store.graph_copy import POOL_FULL, copy_graph, discard, side_files, table_rows, tables
from hippograph.store.kuzu_columns import ColumnTypes
from hippograph.store.kuzu_files import REPLAY_DOUBLINGS, checkpoint_closed, one_result, open_database
from hippograph.store.malloc_arenas import release_free_memory

log = logging.getLogger(__name__)

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# A statement that may change the graph (an autocommit one then leaves pages to checkpoint).
_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE)\b", re.IGNORECASE)
# Opening replays the WAL in the pool; a WAL written before checkpoints kept up with the pool
# (hippograph before issue 22) may need more: the open doubles the pool up to this many times.
_MOST_GROWTH = 8  # the most the page cache grows for writes it cannot hold (see _make_room)
# Up to this many rows, for_each runs a keyed statement per row instead of one UNWIND.
_KEYED_ROWS = 16
# A checkpoint once the WAL holds this fraction of the buffer pool (see KuzuSession._settle).
_WAL_SHARE = 192
_UPDATE_SHARE = 4  # ... or the columns SET since the last one hold this fraction of it:
_SET_COLUMN_BYTES = 24 << 10  # what one column a statement SETs holds until a checkpoint
_STORAGE_FAILED = "Storage exception:"  # what ladybug prefixes its storage layer's errors with

# What a write leaves to do once it is committed (e.g. update the read model).
CommitHook = Callable[[], None]


def check_params(query: str, params: Mapping[str, Any]) -> None:
    """Refuse a statement whose ``$params`` and bound values differ (see the module doc)."""
    wanted = set(_PARAM.findall(query))
    if wanted != set(params):
        # A bug, never user input: refusing here is what keeps a one-row delete one row.
        raise InternalError(
            f"Cypher parameters do not match: unbound {sorted(wanted - set(params))}, "
            f"unused {sorted(set(params) - wanted)}"
        )


def _rebuild_paths(path: Path) -> tuple[Path, Path]:
    """Where a rebuild exports the graph to, and the new file it imports into."""
    return path.with_name(path.name + ".export"), path.with_name(path.name + ".rebuild")


def _engine_failure(err: RuntimeError, pool_bytes: int) -> StoreError:
    """What a caller is told when Kùzu fails a statement that was not wrong in itself."""
    if POOL_FULL in str(err):
        return GraphCacheFull(
            f"the graph engine's page cache ({pool_bytes >> 20} MiB, half of HIPPOGRAPH_MEMORY_BUDGET_BYTES) "
            "could not hold this call's work, so it was not done and nothing of it was stored; "
            "the cache has been written to disk: send the call again. If it fails again, split it "
            "into smaller calls or raise that setting."
        )
    return StoreError(
        f"the graph engine failed this call ({err}), so it was not completed; "
        "send it again, and run `hippograph doctor` if it keeps failing."
    )


def _forget_frames(err: BaseException) -> None:
    """Clear the locals of the finished frames ``err`` and its causes hold, before the graph is
    reopened: ladybug's own frames hold the failed statement, and a closed database is freed only
    once none of its statements is referenced (see ``KuzuSession.run``)."""
    chain: list[BaseException] = []
    link: BaseException | None = err
    while link is not None and link not in chain:
        chain.append(link)
        traceback.clear_frames(link.__traceback__)
        link = link.__cause__ or link.__context__


def _run_each(hooks: Sequence[CommitHook]) -> None:
    for hook in hooks:
        hook()


class KuzuSession:
    """One Kùzu database (a single file) opened read-write by this process, and its connection.

    ``lock`` serialises every use of the connection; a transaction holds it from BEGIN to
    COMMIT, so inside one, ``in_transaction`` is true only for the thread that runs it.
    """

    def __init__(
        self,
        path: Path,
        *,
        max_db_size: int,
        buffer_pool_bytes: int,
        publish: Callable[[Sequence[CommitHook]], None] = _run_each,
        before_commit: Callable[[], None] = lambda: None,
    ) -> None:
        self.path = path
        self.lock = threading.RLock()
        # A commit's hooks go to ``publish``; ``before_commit`` runs before any commit with some.
        self._publish, self._before_commit = publish, before_commit
        self._max_db_size, self._buffer_pool_bytes = max_db_size, buffer_pool_bytes
        self._configured_pool = buffer_pool_bytes
        try:
            self._db = self._open(path)
        except RuntimeError as err:
            raise StoreError(
                f"cannot open the graph store {path}: {err}. If another hippograph process is using "
                "this data dir, stop it or point this one at another --data-dir."
            ) from err
        self._conn = ladybug.Connection(self._db)
        discard(*_rebuild_paths(path))  # a rebuild a crash interrupted: the old file is whole
        # Each statement is prepared once: kuzu 0.11.3 kept ~30-130 KB of native memory per
        # statement prepared (a server grew ~0.5 MB a remember), and planning once saves time.
        self._prepared: dict[str, ladybug.PreparedStatement] = {}
        self.types = ColumnTypes(self.run)
        # The open transaction's commit hooks; None outside a transaction.
        self._hooks: list[CommitHook] | None = None
        # A statement a thread wants committed with its next transaction (see ``commit_with``).
        self._riders: dict[int, tuple[str, dict[str, Any]]] = {}
        self._unsaved_updates = 0  # bytes the values SET since the last checkpoint hold (estimated)
        self.reopened = 0  # times a checkpoint too big for the pool was done by reopening
        self.grown = 0  # times one write too big for the pool doubled it (``_make_room``)
        if self._wal_bytes():  # a killed process's log, replayed into the pool by the open and
            self._checkpoint_or_reopen()  # kept there unwritten (at 1M facts reads then failed)

    def _open(self, path: Path) -> ladybug.Database:
        return open_database(path, self._buffer_pool_bytes, self._max_db_size)

    def close(self) -> None:
        """Checkpoint and close: ladybug does not checkpoint on close (the next open would replay
        the whole log), nor free the file while one of its prepared statements is referenced."""
        with self.lock:
            try:
                self._conn.execute("CHECKPOINT")
                full = False
            except RuntimeError as err:
                full = POOL_FULL in str(err)
                if not full:
                    log.warning("the graph could not be checkpointed before closing (%s)", err)
            self._prepared.clear()
            self._conn.close()
            self._db.close()
            if full:
                checkpoint_closed(self.path, self._buffer_pool_bytes, self._max_db_size, REPLAY_DOUBLINGS)

    def checkpoint(self) -> None:
        """Write everything committed into the database file (and empty the WAL)."""
        with self.lock:
            if self._hooks is not None:
                raise InternalError("the graph cannot be checkpointed inside a transaction")
            self._conn.execute("CHECKPOINT")
            self._unsaved_updates = 0
        release_free_memory()  # what the unsaved changes held, back to the system

    def _wal_bytes(self) -> int:
        """The size of the write-ahead log: what commits changed since the last checkpoint."""
        try:
            return os.stat(f"{self.path}.wal").st_size
        except FileNotFoundError:
            return 0

    def _settle(self) -> None:
        """After a commit: checkpoint once the write-ahead log holds 1/_WAL_SHARE of the pool, or
        the columns SET since the last checkpoint would hold 1/_UPDATE_SHARE of it.

        Kùzu holds every page a commit changed in its buffer pool, unevictable, until a
        checkpoint writes it into the file, and checkpoints by itself only once the WAL passes
        16 MB. A remember pins ~30 KB of pool for ~1.3 KB of WAL, so the default 128 MiB pool
        filled after about 4,000 remembers and every statement after failed (issue 22). A WAL of
        1/192 of the pool (341 KB at 64 MiB, ~260 remembers) bounds the pinned pages to about an
        eighth of it, leaving room for reads, the next transaction and the checkpoint's own work.
        (A rule on the pool's use counted cached pages, which Kùzu evicts at will: at 100k facts
        it checkpointed every ~8 remembers, remember p95 640 ms; see the git log.)

        Outside the pool, ladybug 0.22 keeps what commits wrote until a checkpoint: ~30 MB for
        the first writes after one, ~0.2 MB a remember after that (5k facts), and each column a
        transaction SETs as a vector of its own, 20-30 KB however few rows (one ``SET e.n =
        e.n + 1`` a transaction: 98 MB after 3,000; 4.8 MB with a checkpoint every 100). The
        SETs are counted per statement run (``_SET_COLUMN_BYTES``), the rest is the WAL's."""
        if (
            self._wal_bytes() <= self._buffer_pool_bytes // _WAL_SHARE
            and self._unsaved_updates <= self._buffer_pool_bytes // _UPDATE_SHARE
        ):
            return
        try:
            self._checkpoint_or_reopen()
        except (RuntimeError, StoreError) as err:
            log.warning(  # the commit stands; the next one tries again
                "could not checkpoint the graph (%s); if this repeats, raise "
                "HIPPOGRAPH_MEMORY_BUDGET_BYTES (the graph's page cache, half of it, is %d MiB)",
                err,
                self._buffer_pool_bytes >> 20,
            )

    def _checkpoint_or_reopen(self) -> None:
        """Checkpoint; if the pool cannot hold it, close the database, checkpoint the file in a
        pool doubled until it fits and open it again at twice the pool (at most _MOST_GROWTH
        times the configured one). A checkpoint may rewrite a node group whole (the edges into a
        table of few nodes sit in one: at ~1M facts that outgrew a 64 MiB pool, and commits
        failed after). Opened at the same pool, the replayed log would stay pinned, unwritten.
        It grows since a checkpoint's need grows with the graph: at the same size every later one
        failed too (32 MiB at ~4,400 hub facts: every ~130 remembers).

        ladybug 0.22, reopened in the same process after such a failure, may hold a string
        dictionary in memory that its next checkpoint cannot write ("Storage exception: String
        dictionary ..."), though the file and its log are whole (a fresh process checkpoints
        them): the graph is then reopened once more, with no checkpoint, and checkpointed. Left
        open, its writes failed alike and the store no longer opened (64 MiB budget, 2026-11-30)."""
        try:
            self.checkpoint()
        except RuntimeError as err:
            if _STORAGE_FAILED in str(err):
                log.warning("the graph engine could not checkpoint (%s): reopening the graph", err)
                self._reopen()
                self.reopened += 1
                self.checkpoint()
                return
            if POOL_FULL not in str(err):
                raise
            grow = self._buffer_pool_bytes < self._configured_pool * _MOST_GROWTH
            log.warning(
                "the graph's page cache (%d MiB) could not hold a checkpoint (%s): reopening the graph "
                "to checkpoint in a larger one, then at %d MiB",
                self._buffer_pool_bytes >> 20,
                err,
                (self._buffer_pool_bytes << grow) >> 20,
            )
            with self.lock:
                self._buffer_pool_bytes <<= grow
                self.grown += grow
                self._reopen(checkpoint=True)
            self.reopened += 1
            release_free_memory()

    def _reopen(self, *, checkpoint: bool = False) -> None:
        """Close the database (``checkpoint``: and checkpoint the closed file in a larger pool)
        and open it again at ``_buffer_pool_bytes``."""
        with self.lock:
            if self._hooks is not None:
                raise InternalError("the graph cannot be reopened inside a transaction")
            self._prepared.clear()  # ladybug holds the file while a prepared statement lives
            self._conn.close()
            self._db.close()
            if checkpoint:
                checkpoint_closed(self.path, self._buffer_pool_bytes, self._max_db_size, REPLAY_DOUBLINGS)
            self._db = self._open(self.path)
            self._conn = ladybug.Connection(self._db)
            self._unsaved_updates = 0  # closed and checkpointed (by the open, else here)

    def _make_room(self) -> bool:
        """After a write the pool could not hold: checkpoint what it held for earlier commits; if
        it held little, the write alone outgrew it, and the pool is doubled, up to _MOST_GROWTH
        times the configured one. Whether room was made (the call sent again may fit)."""
        small = self._wal_bytes() <= self._buffer_pool_bytes // _WAL_SHARE
        try:
            self.checkpoint()
        except RuntimeError:
            return False
        if not small:
            return True  # the pages earlier commits pinned are written: room for the same write
        if self._buffer_pool_bytes < self._configured_pool * _MOST_GROWTH:
            log.warning(
                "one write needed more than the graph's %d MiB page cache: it is %d MiB from now on "
                "in this process (HIPPOGRAPH_MEMORY_BUDGET_BYTES sets where it starts)",
                self._buffer_pool_bytes >> 20,
                self._buffer_pool_bytes >> 19,
            )
            with self.lock:
                self._buffer_pool_bytes *= 2
                self.grown += 1
                self._reopen()
            return True
        return False

    def _failed(self, err: RuntimeError) -> StoreError:
        """``err`` as a caller's error, after freeing what a full pool needs freed (a checkpoint
        outside a transaction: the failed one has been rolled back)."""
        if (POOL_FULL in str(err) or _STORAGE_FAILED in str(err)) and self._hooks is None:
            _forget_frames(err)
            with suppress(RuntimeError, StoreError):
                self._checkpoint_or_reopen()
        return _engine_failure(err, self._buffer_pool_bytes)

    def rebuild(self) -> None:
        """Write the database afresh from its contents and swap it in, so that nothing deleted or
        overwritten survives: Kùzu leaves old strings in the file's free pages (a SET or DELETE
        followed by a checkpoint kept them, tested), so a purge ends here.

        Every table is copied in slices into a new file beside it (``graph_copy``: the page
        cache holds one slice at a time, whatever the store's size), both are closed, the new
        file replaces the old one (atomic), and it is reopened. A crash before the replace
        leaves the old file whole (the leftovers are removed at the next open). The new file
        is compact (``service.upkeep.Upkeep.compact_graph``).
        """
        export, fresh = _rebuild_paths(self.path)
        if "'" in str(export):
            raise StoreError(f"cannot rebuild the graph store: its path {self.path} holds a quote (')")
        with self.lock:
            if self._hooks is not None:
                raise InternalError("the graph cannot be rebuilt inside a transaction")
            self._conn.execute("CHECKPOINT")
            small = copy_graph(self._conn, export, fresh, self._open, self._buffer_pool_bytes)
            self._conn.close()
            self._db.close()
            self._prepared.clear()
            os.replace(fresh, self.path)
            discard(export, *side_files(self.path))  # none after a clean close
            self._db = self._open(self.path)
            self._conn = ladybug.Connection(self._db)
            few = [table for table in tables(self._conn) if table.name in small]
            if table_rows(self._conn, few) != small:  # seen once at 1M facts, in Meta: say so
                log.error("the rebuilt graph's small tables read back otherwise after it was swapped in")

    # ------------------------------------------------------------ statements

    def run(
        self, query: str, params: Mapping[str, Any] | None = None, *, published: bool = True
    ) -> list[dict[str, Any]]:
        """One statement, every ``$param`` bound, its rows as dicts. ``published=False``: a write
        outside a transaction that no hook follows (the Meta table's)."""
        params = dict(params or {})
        check_params(query, params)
        with self.lock:
            if published and self._hooks is None and _WRITES.search(query):
                self._before_commit()
            try:
                rows = self._rows(query, params)
            except GraphCacheFull as full:
                # A read outside a transaction is sent once more, after ``_failed`` made room: the
                # first keyed read after the graph was reopened to checkpoint in a larger pool
                # failed so once (a 64 MiB budget, 5k facts, 2026-12-02), and its caller's
                # remember with it; sent again, it passed. Not a write: one large enough for the
                # engine's own checkpoint at commit may fail after it is stored.
                if self._hooks is not None or _WRITES.search(query):
                    raise
                _forget_frames(full)
                rows = self._rows(query, params)
            if self._hooks is None and _WRITES.search(query):
                self._settle()
        return rows

    def _rows(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One statement's rows (under ``lock``), failures as the caller's errors (``_failed``)."""
        try:
            prepared = self._prepared.get(query)
            if prepared is None:
                prepared = self._prepared[query] = self._conn.prepare(query)
            result = one_result(self._conn.execute(prepared, params))
            self._unsaved_updates += statements.columns_set(query) * _SET_COLUMN_BYTES
            columns = result.get_column_names()
            rows = [dict(zip(columns, row, strict=True)) for row in result.get_all()]
            result.close()
        except RuntimeError as err:
            prepared = result = None  # see below
            raise self._failed(err) from err
        # A reopen (``_settle``, ``_failed``) closes the database, which ladybug frees only
        # once no statement of it is referenced: one kept here outlived the close and was
        # freed after the new database had opened the same file.
        prepared = result = None
        return rows

    def execute(self, statement: str) -> None:
        """A statement without parameters, not kept prepared (a migration's DDL)."""
        check_params(statement, {})
        with self.lock:
            try:
                one_result(self._conn.execute(statement)).close()
            except RuntimeError as err:
                raise self._failed(err) from err
            if self._hooks is None:
                self._settle()

    def columns(self, query: str) -> dict[str, list[Any]]:
        """A whole-table read as Python lists per column (Arrow: ~5x faster than rows)."""
        check_params(query, {})
        with self.lock:
            try:
                result = one_result(self._conn.execute(query))
                table = result.get_as_arrow(chunk_size=1_000_000)
                result.close()
            except RuntimeError as err:
                raise self._failed(err) from err
        return {name: table.column(name).to_pylist() for name in table.column_names}

    def table_names(self) -> set[str]:
        with self.lock:
            result = one_result(self._conn.execute("CALL show_tables() RETURN name"))
            return {str(row[0]) for row in result.get_all()}  # type: ignore[index]

    # ------------------------------------------------------------ transactions

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; their hooks run only after COMMIT."""
        with self.lock:
            self._conn.execute("BEGIN TRANSACTION")
            self._hooks = []
            try:
                yield
                rider = self._riders.get(threading.get_ident())
                if rider is not None:  # rolled back with the rest if it fails, and kept for a retry
                    self.run(*rider)
            except BaseException as err:
                self._hooks = None
                # A statement that failed (e.g. a full buffer pool) has rolled it back already;
                # "no active transaction" must not hide that failure.
                with suppress(RuntimeError):
                    self._conn.execute("ROLLBACK")
                if isinstance(err, GraphCacheFull):
                    _forget_frames(err)
                    err.room_made = self._make_room()
                raise
            hooks, self._hooks = self._hooks, None
            self._before_commit()
            try:
                self._conn.execute("COMMIT")
            except RuntimeError as err:
                with suppress(RuntimeError):
                    self._conn.execute("ROLLBACK")
                raise self._failed(err) from err
            self._riders.pop(threading.get_ident(), None)
            self._settle()
            self._publish(hooks)

    def commit_with(self, query: str, params: Mapping[str, Any]) -> None:
        """Run this statement inside the next transaction this thread commits (none, if it
        commits none before ``drop_rider``): a record that must exist exactly when the write does."""
        with self.lock:
            self._riders[threading.get_ident()] = (query, dict(params))

    def has_rider(self) -> bool:
        """Whether this thread's ``commit_with`` statement still waits for a commit."""
        return threading.get_ident() in self._riders  # one dict lookup: atomic, no lock to wait for

    def drop_rider(self) -> bool:
        """Forget this thread's ``commit_with`` statement; whether it was still waiting."""
        with self.lock:
            return self._riders.pop(threading.get_ident(), None) is not None

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open: call it holding ``lock``, then it is this thread's."""
        return self._hooks is not None

    def after_commit(self, hook: CommitHook) -> None:
        """Run ``hook`` for a write that just ran: now, or when its transaction commits."""
        with self.lock:
            if self._hooks is not None:
                self._hooks.append(hook)
            else:
                self._publish([hook])

    # ------------------------------------------------------------ batched writes

    def for_each(
        self,
        rows: list[dict[str, Any]],
        ends: Sequence[tuple[str, str, str]],
        table: str,
        columns: Sequence[str],
        clause: str,
    ) -> None:
        """Run ``clause`` once per row, with each row's ``columns`` of ``table`` bound as ``v_<column>``.

        ``ends`` are the nodes to find first, as (pattern, key property, row field): ``("a:Fact",
        "id", "src")`` matches ``(a:Fact {id: <row's src>})`` (``kuzu_statements``)."""
        with self.lock:
            if len(rows) == 1 or (self.in_transaction and len(rows) <= _KEYED_ROWS):
                # A few rows (the single-fact path): ends keyed by parameters are primary-key
                # lookups (~0.3 ms); found through the UNWIND row, each end costs a scan of its
                # table (~10 ms at 100k facts). One statement per row, so only inside a
                # transaction (or for one row), which keeps the rows all-or-nothing.
                query = statements.keyed(ends, table, columns, clause, self.types.cast)
                for row in rows:
                    self.run(query, statements.keyed_params(row, ends, columns))
                return
        self.run(statements.unwound(ends, table, columns, clause, self.types.cast), {"rows": rows})
