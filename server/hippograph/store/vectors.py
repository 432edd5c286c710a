"""The vector index (LanceDB): buffered writes, and vector and full-text search under filters.

LanceDB holds, per fact and per entity, the text, its vector and the few columns that
candidate search filters on. It is an index over Kùzu and can always be rebuilt from it:
a table written by another schema version or another embedding model is dropped and
rebuilt at start (lance_tables.py). Every filter is built from validated values (``_sql_literal``).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from hippograph.store.cache_budget import DEFAULT_SHARES, CacheBudget
from hippograph.store.fact_times import READ, FactTimes, aligned
from hippograph.store.held_vectors import FactRows, HeldVectors, held_search
from hippograph.store.lance_queries import awaited, nearest_rows, scan, text_rows
from hippograph.store.lance_tables import (
    connect,
    damage,
    open_table,
    queried,
    readable,
    recreate_table,
    rewrite_table,
)
from hippograph.store.lance_upkeep import (
    ANN_MIN_ROWS,
    ann_due,
    ann_segments,
    build_ann_index,
    fold,
    left_unfolded,
)
from hippograph.store.vector_matrix import Matrix
from hippograph.store.vector_neighbours import Neighbours, lance_neighbours
from hippograph.store.vector_rows import Filter, Hit, as_stored, cosines, fact_row, id_list, ranked, unit

__all__ = ["Filter", "Hit", "LanceVectorStore", "as_stored", "fact_row", "id_list", "unit"]

log = logging.getLogger(__name__)

_TABLES = ("facts", "entities")
_KEEP_VERSIONS = timedelta(minutes=1)
_KEEP_CLOSING = timedelta(seconds=1)  # no search is in flight once the store closes
# Writes are buffered and written by a background thread once none has come for _QUIET_S, at
# the latest this long after the first one, in one LanceDB add (or by the next read, first, so
# every read sees every acknowledged write).
# A LanceDB add costs ~10 ms and a version whatever its size; buffered, a remember costs an
# in-memory append and a burst of remembers becomes one fragment. The graph has committed
# before anything is buffered, so a crash loses nothing: the next open re-indexes the rest.
# Each fragment costs every later query until a fold (~0.25 ms a search at 5k facts: 26.3 ms
# p50 with 2, 32.5 with 33, 41.9 with 65): with 0.1 s, 100 remembers over MCP one at a time
# left 25-28 fragments, with 1 s 6, and the 50 searches after them took 30.0-35.0 ms p50
# against 36.0-40.3 (2026-12-01, two runs each).
_FLUSH_AFTER_S = 1.0
# A remember over MCP comes every ~30-40 ms in a burst; after a lone one, a search a moment
# later finds its row written instead of writing it first (a LanceDB add, ~10 ms): at 5k facts
# over MCP, a search 0.3 s after a lone remember 58.6 / 62.0 -> 49.1 / 52.8 ms p50 (60 each,
# two servers each), fragments after a burst of 100 the same (8 / 8 -> 6 / 5; 2026-12-01).
_QUIET_S = 0.1
# A buffer this large is written by the writer itself (back-pressure on bulk paths).
_FLUSH_ROWS = 1024
# Rows written since nearest's pinned version (searched exactly, in memory) before it re-pins.
_PIN_ROWS = 500


class LanceVectorStore:
    def __init__(self, path: Path, *, dim: int, model: str, cache: CacheBudget = DEFAULT_SHARES) -> None:
        self.path, self._dim, self._model = path, dim, model
        self._db = connect(path, cache)
        self._lock = threading.Lock()  # held while LanceDB is written
        # Set when a write raised: the graph may hold what this index lacks, so the next open
        # must reconcile even after a clean close (Memory.close then records no versions).
        self.write_failed = False
        self._index_lock = threading.Lock()  # index builds and folds one at a time (lance_upkeep)
        # The tables dropped and created empty (unreadable, or for another schema or model).
        self.rebuilt: set[str] = set()
        self.refilling: set[str] = set()  # rebuilt while serving, not yet refilled (see queried)
        self._tables: dict[str, Any] = {}
        for name in _TABLES:
            self._tables[name], rebuilt = open_table(self._db, name, dim=dim, model=model)
            if rebuilt:
                self.rebuilt.add(name)
        self._appends = left_unfolded(self._tables.values())  # written since the last fold
        # The write-behind buffer (see _FLUSH_AFTER_S), guarded by _buffer_lock, which is never
        # held across a LanceDB call: a writer never waits for a flush in progress.
        self._buffer_lock = threading.Lock()
        self._buffered: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in _TABLES}
        self._statuses: dict[str, str] = {}  # fact id -> new status, for rows already handed on
        # True from when a flush takes the buffer until LanceDB has it (or it is handed back):
        # meanwhile the rows are in neither place a read looks, so a read must wait for it.
        self._in_flight = False
        self._flushing: dict[str, dict[str, dict[str, Any]]] = {}  # the rows a flush is writing
        # For nearest: each table pinned at a version, and the rows written since (see _pinned).
        self._pins: dict[str, Any] = {}
        self._since_pin: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in _TABLES}
        self._wake = threading.Event()
        self.fold_wanted = threading.Event()  # set once a burst of writes ends with a fold due
        self._closing = threading.Event()  # set by close: the writer stops, close writes the rest
        self._flusher: threading.Thread | None = None
        self._held = HeldVectors(cache.held_vectors, dim)  # entities and facts in numpy, while they fit

    def close(self) -> None:
        """Stop the background writer and write what is buffered (raises if that write fails)."""
        self._closing.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join(timeout=60)
        self.flush()

    # ------------------------------------------------------------ writes

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the write lock; a write that fails marks the index as possibly behind the graph."""
        with self._lock:
            try:
                yield
            except BaseException:
                self.write_failed = True
                raise

    def add(self, table: str, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        """Buffer rows for the table; they are written shortly, and every read sees them."""
        if not rows:
            return
        records = [_record(row, vector) for row, vector in zip(rows, vectors, strict=True)]
        with self._buffer_lock:
            buffered = self._buffered[table]
            for record in records:
                buffered[record["id"]] = record
                if table == "facts":
                    self._statuses.pop(record["id"], None)  # the row carries its own status
            self._held.added(table, rows, vectors)
            size = sum(len(b) for b in self._buffered.values())
        if size >= _FLUSH_ROWS:
            self.flush()
        else:
            self._wake_writer()

    def set_status(self, ids: Sequence[str], status: str) -> None:
        """Buffer a status change, like ``add``."""
        if not ids:
            return
        with self._buffer_lock:
            buffered = self._buffered["facts"]
            for fid in ids:
                if fid in buffered:
                    buffered[fid]["status"] = status
                else:
                    self._statuses[fid] = status
            self._held.restated(ids, status)
        self._wake_writer()

    def _wake_writer(self) -> None:
        if self._flusher is None:
            with self._buffer_lock:
                if self._flusher is None and not self._closing.is_set():
                    self._flusher = threading.Thread(
                        target=self._write_behind, name="hippograph-vector-writes", daemon=True
                    )
                    self._flusher.start()
        self._wake.set()

    def _write_behind(self) -> None:
        while not self._closing.is_set():
            self._wake.wait()
            if _gathered(self._wake, self._closing):
                return
            try:
                self.flush()
            except Exception:  # kept buffered: the next write or read tries again
                log.exception("writing buffered rows to the vector index failed; will retry")
            # No write for as long again: the burst has ended, and a fold due now is wanted.
            if not self._wake.wait(_FLUSH_AFTER_S) and self._appends.wanted():
                self.fold_wanted.set()

    def flush(self) -> None:
        """Write the buffered rows and status changes to LanceDB now.

        Returns once every write acknowledged before the call is in LanceDB, including rows
        another thread's flush is writing at the moment (it holds the write lock until done).
        """
        if self._pending():
            with self._writing():
                self._flush_locked()

    def _pending(self) -> bool:
        with self._buffer_lock:
            return self._in_flight or bool(self._statuses) or any(self._buffered.values())

    def _flush_locked(self) -> None:
        with self._buffer_lock:
            adds = {name: rows for name, rows in self._buffered.items() if rows}
            statuses = self._statuses
            self._buffered = {name: {} for name in _TABLES}
            self._statuses = {}
            self._in_flight = bool(adds or statuses)
            self._flushing = {name: dict(rows) for name, rows in adds.items()}
        if not self._in_flight:
            return
        written = sum(len(rows) for rows in adds.values()) + len(statuses)
        try:
            for name in list(adds):
                self._tables[name].add(list(adds[name].values()))
                with self._buffer_lock:
                    self._since_pin[name].update(adds.pop(name))
            by_status: dict[str, list[str]] = {}
            for fid, status in statuses.items():
                by_status.setdefault(status, []).append(fid)
            for status, ids in by_status.items():
                self._tables["facts"].update(where=f"id IN {id_list(ids)}", values={"status": status})
                for fid in ids:
                    del statuses[fid]
        except BaseException:
            with self._buffer_lock:  # hand back what was not written; newer writes win
                for name, rows in adds.items():
                    self._buffered[name] = {**rows, **self._buffered[name]}
                self._statuses = {**statuses, **self._statuses}
            raise
        finally:
            with self._buffer_lock:
                self._in_flight = False
                self._flushing = {}
        if self._appends.noted(written):
            self._optimize_locked(wait=False)  # not while a build runs: at a later append then

    def _flush_for_read(self) -> None:
        """Flush before a read; if writing fails, the read goes on without the buffered rows."""
        try:
            self.flush()
        except Exception:
            log.exception("writing buffered rows to the vector index failed; reading without them")

    def update(self, table: str, ids: Sequence[str], values: Mapping[str, Any]) -> None:
        if not ids:
            return
        with self._writing():
            self._flush_locked()
            self._tables[table].update(where=f"id IN {id_list(ids)}", values=dict(values))
            with self._buffer_lock:
                self._held.updated(table, ids, values)

    def delete(self, table: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self._writing():
            self._flush_locked()
            self._tables[table].delete(f"id IN {id_list(ids)}")
            with self._buffer_lock:
                self._held.deleted(table, ids)

    def erase(self, facts: Sequence[str], entities: Sequence[str]) -> None:
        """Delete rows so that nothing of them is left on disk (a purge): every table rewritten
        from its remaining rows, older versions and their files removed, the full-text and
        scalar indexes built again. The ANN vector index is left to ``ensure_vector_index`` (a
        server's background job, within a minute): at 100k facts it took 25 of a purge's 33 s,
        and search is exact without it meanwhile."""
        with self._writing():
            self._flush_locked()
            for name, ids in (("facts", facts), ("entities", entities)):
                if ids:
                    self._tables[name].delete(f"id IN {id_list(ids)}")
            with self._index_lock:
                for name in _TABLES:
                    self._tables[name] = rewrite_table(self._db, name, self._tables[name])
            self._folded()
            with self._buffer_lock:
                self._held.forget()

    def ensure_vector_index(self, table: str = "facts", min_rows: int = ANN_MIN_ROWS) -> bool:
        """Build the ANN index once the table is large, afresh once it has many segments, by a
        worker process (``lance_upkeep.build_ann_index``); True if one was built now."""
        rows = self.count(table)
        with self._index_lock:
            due, how = ann_due(self._tables[table], rows, min_rows)
            if due:
                build_ann_index(self.path, table, afresh=how)
                with self._lock:  # no flush in flight: the built version is checked out over ours
                    self._tables[table].checkout_latest()
        return due

    def optimize(self, *, closing: bool = False, when_due: bool = False) -> bool:
        """Fold the appended rows into the indexes, compact the files, drop old versions; True if
        it ran. ``when_due`` (the background job) and ``closing``: if ``Appends.due`` says so.
        ``closing`` folds only tables too small for an ANN index, and not while an index build
        runs: at 1M facts a fold took 2-11 s, and a stdio client kills a server 2-4 s after it
        closes stdin. The next process's background job folds what is left (``left_unfolded``);
        until then those rows are searched exactly."""
        with self._writing():
            self._flush_locked()
            if (when_due or closing) and not self._appends.due(closing=closing):
                return False
            if closing and any(ann_segments(table) is not None for table in self._tables.values()):
                return False
            return self._optimize_locked(_KEEP_CLOSING if closing else _KEEP_VERSIONS, wait=not closing)

    def _optimize_locked(self, keep: timedelta = _KEEP_VERSIONS, *, wait: bool = True) -> bool:
        """Optimize every table; without ``wait``, not while the ANN index is being built."""
        if not self._index_lock.acquire(blocking=wait):
            return False
        start = time.monotonic()
        try:
            for table in self._tables.values():
                # Every append is a Lance version; only this process reads them, so old ones go
                # (kept a minute while serving, so a search in flight never loses its files).
                fold(self.path, table, keep)
        finally:
            self._index_lock.release()
        self._folded(time.monotonic() - start)
        return True

    def _folded(self, took: float = 0.0) -> None:
        """After a fold (that took ``took`` s) or a rewrite: nothing waits to be folded, and the
        pinned versions are dropped (old versions' files may be gone): nearest pins afresh."""
        self._appends.folded(took)
        with self._buffer_lock:
            self._pins.clear()

    def damaged(self) -> dict[str, str]:
        """Tables some file of which is missing or cut short: name -> what failed reading it whole."""
        with self._lock:
            found = {name: damage(table, full=True) for name, table in self._tables.items()}
        return {name: problem for name, problem in found.items() if problem is not None}

    def rebuild(self, names: Iterable[str]) -> None:
        """Create these tables afresh, empty, for reconcile to fill (then clear ``refilling``)."""
        with self._lock, self._buffer_lock:
            for name in names:
                self.refilling.add(name)
                self._tables[name] = recreate_table(self._db, name, dim=self._dim, model=self._model)
                self.rebuilt.add(name)
                self._since_pin[name] = {}
            self._pins.clear()
            self._held.forget()

    # ------------------------------------------------------------ reads

    @readable
    def ids(self, table: str) -> dict[str, str]:
        """id -> status (facts) or type (entities), for reconciliation with the graph."""
        self._flush_for_read()
        data = scan(self._tables[table], None, ["id", "status" if table == "facts" else "type"])
        return dict(zip(data.column(0).to_pylist(), data.column(1).to_pylist(), strict=True))

    @queried
    def similarities(self, table: str, ids: Sequence[str], vector: np.ndarray) -> dict[str, float]:
        """Cosine similarity of ``vector`` to each of these rows (ids not indexed are left out)."""
        if table == "facts" and isinstance(held := self._held_table("facts"), FactRows):
            return held.similarities(ids, vector)
        self._flush_for_read()
        if not ids:
            return {}
        return cosines(scan(self._tables[table], f"id IN {id_list(ids)}", ["id", "vector"]), vector)

    @queried
    def vector_search(self, table: str, vector: np.ndarray, k: int, where: Filter | None = None) -> list[Hit]:
        held = held_search(self._held_table(table), vector, k, where)
        if held is not None:
            return held
        self._flush_for_read()
        clause = where.sql() if where else None
        found = nearest_rows(self._tables[table], vector.astype(np.float32), k, clause, ["id", "_distance"])
        return [Hit(r["id"], 1.0 - float(r["_distance"]), i) for i, r in enumerate(found.to_pylist(), 1)]

    @queried
    def nearest(self, table: str, vectors: np.ndarray, k: int, where: Filter) -> list[list[Hit]]:
        """For each of ``vectors``, the ``k`` rows nearest it, with their exact cosine similarity to
        the stored (half-precision) vectors; buffered rows included, the buffer not written first.

        For remember, which must not pay for a flush (~10 ms) nor see an ANN index's 8-bit
        distances (a threshold is applied to them): LanceDB proposes candidates, in one query
        for all the vectors, and the similarity is computed here from the vectors it returns.
        """
        queries = np.stack([unit(v) for v in vectors]) if len(vectors) else np.empty((0, self._dim))
        if not len(queries):
            return []
        if table == "facts" and where == Filter(statuses=where.statuses, scopes=where.scopes):
            held = self._held_table("facts")
            if isinstance(held, FactRows):
                return held.nearest(queries, k, where.scopes, where.statuses)
        pinned, pending = self._pinned(table)
        clause = where.sql()
        # One vector (a remember) as a plain query: the batch form costs ~0.3 ms more.
        asked = queries[0] if len(queries) == 1 else list(queries)
        found = nearest_rows(pinned, asked, k, clause, ["id", "vector", "_distance"])
        indexes = found.column("query_index").to_pylist() if "query_index" in found.column_names else []
        ids = [str(fid) for fid in found.column("id").to_pylist()] + [
            str(r["id"]) for r in pending if where.matches(r)
        ]
        stored = [as_stored(v) for v in found.column("vector").to_pylist()]
        stored += [as_stored(r["vector"]) for r in pending if where.matches(r)]
        asking = (indexes or [0] * found.num_rows) + [-1] * (len(ids) - found.num_rows)  # -1: every query
        return ranked(queries, ids, stored, asking, k)

    @queried
    def neighbours(self, table: str, where: Filter, k: int) -> Neighbours:
        """Each row ``where`` admits, its ``k`` nearest others among them, by ``lance_neighbours``."""
        self._flush_for_read()
        return lance_neighbours(self.path, table, where.sql(), self._dim, k)

    @queried
    def fact_times(self, table: str, where: Filter, ids: Sequence[str]) -> FactTimes:
        self._flush_for_read()
        return aligned(scan(self._tables[table], where.sql(), READ), ids)

    def _pinned(self, table: str) -> tuple[Any, list[dict[str, Any]]]:
        """The table at a fixed version, and the rows that version lacks (written since, being
        written, or buffered), for ``nearest``.

        A query of the latest version after each small append cost ~10 ms at 100k facts, of a
        version pinned before them ~4.5 ms (the appends are unindexed fragments). The pin is
        renewed after each optimize (which folds the appends into the indexes and may remove old
        versions' files) and when the rows written since pass ``_PIN_ROWS``. A pin waits for a
        flush in progress: no row is then both unwritten and out of the buffer."""
        with self._buffer_lock:
            pinned = self._pins.get(table)
            if pinned is not None and len(self._since_pin[table]) <= _PIN_ROWS:
                rows = {**self._since_pin[table], **self._flushing.get(table, {}), **self._buffered[table]}
                return pinned, list(rows.values())
        with self._lock:
            pinned = self._db.open_table(table)
            pinned.checkout(self._tables[table].version)
            with self._buffer_lock:
                self._pins[table] = pinned
                self._since_pin[table] = {}
                return pinned, list(self._buffered[table].values())

    def _held_table(self, name: str) -> Matrix | FactRows | None:
        """The table in numpy (``held_vectors``; read on first use), or None when too large."""
        if self._held.known(name):  # without the locks: a read must not wait for a flush in progress
            return self._held.held(name)
        # Under both locks: no flush is in flight, so every row is in the table or buffered.
        with self._lock, self._buffer_lock:
            return self._held.get(name, self._tables[name], self._buffered[name], self._statuses)

    def text_search(self, table: str, text: str, k: int, where: Filter | None = None) -> list[Hit]:
        return self.start_text_search(table, text, k, where)()

    @queried
    def start_text_search(
        self, table: str, text: str, k: int, where: Filter | None = None
    ) -> Callable[[], list[Hit]]:
        """``text_search`` begun on LanceDB's event loop (``lance_queries.text_rows``); the call
        returned waits for its hits."""
        if not text.strip():
            return lambda: []
        self._flush_for_read()
        begun = text_rows(self._tables[table], text, k, where.sql() if where else None, ["id", "_score"])
        return functools.partial(self._text_hits, table, begun)

    @readable
    def _text_hits(self, table: str, begun: Future[Any]) -> list[Hit]:
        return [Hit(r["id"], float(r["_score"]), i) for i, r in enumerate(awaited(begun).to_pylist(), 1)]

    def versions(self) -> str:
        """The tables' current versions, e.g. ``facts:12 entities:4`` (any write changes them)."""
        self.flush()
        return " ".join(f"{name}:{table.version}" for name, table in self._tables.items())

    @readable
    def count(self, table: str) -> int:
        self._flush_for_read()
        return int(self._tables[table].count_rows())


def _gathered(wake: threading.Event, closing: threading.Event) -> bool:
    """Let a burst of writes gather into one LanceDB add: wait until none has come (``wake`` not
    set) for ``_QUIET_S``, at most ``_FLUSH_AFTER_S``; True if ``closing`` is set (a close does not
    wait for a burst to end)."""
    deadline = time.monotonic() + _FLUSH_AFTER_S
    while True:
        wake.clear()
        if closing.wait(max(0.0, min(_QUIET_S, deadline - time.monotonic()))):
            return True
        if not wake.is_set() or time.monotonic() >= deadline:
            return False


def _record(row: Mapping[str, Any], vector: np.ndarray) -> dict[str, Any]:
    """A row as the table stores it: its vector in half precision, its times in UTC."""
    record = dict(row)
    record["vector"] = np.asarray(vector, dtype=np.float16)
    for key in ("created_at", "event_time", "time"):
        if isinstance(record.get(key), datetime):
            record[key] = record[key].astimezone(UTC)
    return record
