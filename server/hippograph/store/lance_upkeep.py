"""When the vector index's LanceDB indexes are built, folded and built afresh.

Every LanceDB append is a fragment that each query opens (~0.1 ms each); an optimize compacts
the fragments and folds their rows into the indexes, the ANN index as a new segment (LanceDB's
Python API does not merge segments) that each vector query searches too. ``Appends`` says when a
fold is due; ``ann_due`` says when the ANN index is built, and built afresh (it has too many
segments), and ``build_ann_index`` builds it, in a worker process. A build and a fold never run
at once: Lance refuses the fold's index commit if a build committed meanwhile ("Retryable commit
conflict"), so the vector store holds one lock for both, and its write path skips a fold while
a build runs (it tries again at its next append).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from hippograph.store.worker_process import in_worker

log = logging.getLogger(__name__)

# Compact the fragments small appends leave behind once this many accumulate, on the write path:
# the backstop when no background job folds them (see FOLD_FRAGMENTS).
OPTIMIZE_EVERY = 200
# A vector query searches every segment of the ANN index: on 31k real facts it took 5.3 ms with
# one segment, 9.5 with 11 and 18.7 with 41 (2026-11-27). Past this many segments the index is
# built afresh, in the background (12 s at 31k facts).
MAX_SEGMENTS = 8
# The background job folds appends into the indexes once this many wait (5,000 unindexed rows
# in 10 fragments added ~1.5 ms to a vector query and ~2.6 ms to a full-text one at 40k rows) or
# the first of them has waited FOLD_AFTER_S. Folding every minute made a segment a minute while
# a user was writing.
FOLD_FRAGMENTS = 32
FOLD_ROWS = 4_096
FOLD_AFTER_S = 900.0
# When a burst of writes ends with a fold due, the job is woken for it at once, not at its next
# tick: 200 remembers in a burst left 32 fragments that made each search ~10 ms slower (21.9 ->
# 32.4 ms p50 at 5k facts, full text the most) until a fold that took 0.24 s. Not during the
# burst: folding each time 32 appends waited left a server 40-60 MB larger after 6,000 single
# remembers (bench.growth). A fold holds writers back while it runs (2-11 s at 1M facts), so it
# is woken early only while folding takes at most this share of the time; past it, the tick folds.
FOLD_SHARE = 0.1
# Below this many rows an exact scan is fast enough; above it, an ANN index pays off. Measured
# on the perf bench's facts and queries (with IVF-HNSW-SQ, the index until 2026-11-29): at 5k
# rows flat 11.4 ms vs 6.4 ms (0.989 of the exact top-40, built in 1.0 s); at 10k flat 15.4 ms
# vs 6.2 ms (0.985, 2.3 s).
ANN_MIN_ROWS = 5_000


@dataclass
class Appends:
    """The appends (fragments) and rows written since the last fold."""

    fragments: int = 0
    rows: int = 0
    since: float = 0.0  # time.monotonic() of the first of them
    last_took: float = 0.0  # how long the last fold took (s)
    last_end: float = 0.0  # time.monotonic() when it ended

    def noted(self, rows: int) -> bool:
        """Count one append of ``rows``; True once the write path should fold (OPTIMIZE_EVERY)."""
        if not self.fragments:
            self.since = time.monotonic()
        self.fragments += 1
        self.rows += rows
        return self.fragments >= OPTIMIZE_EVERY

    def due(self, *, closing: bool = False) -> bool:
        """Whether to fold them now: at a close, once anything was appended (a process that only
        read has nothing to fold); for the background job, once enough wait."""
        if not self.fragments or closing:
            return bool(self.fragments)
        waited = time.monotonic() - self.since
        return self.fragments >= FOLD_FRAGMENTS or self.rows >= FOLD_ROWS or waited >= FOLD_AFTER_S

    def wanted(self) -> bool:
        """Whether to wake the background job for a fold now (a burst of writes has ended): it is
        due, and folding since the last fold began would be at most FOLD_SHARE of the time."""
        rested = time.monotonic() - self.last_end >= self.last_took * (1 / FOLD_SHARE - 1)
        return rested and self.due()

    def folded(self, took: float = 0.0) -> None:
        self.fragments = self.rows = 0
        self.last_took, self.last_end = took, time.monotonic()


def left_unfolded(tables: Iterable[Any]) -> Appends:
    """What earlier processes left unfolded in ``tables`` (a close leaves a large table's appends
    to the next process): due at once, for the background job."""
    tables = list(tables)
    rows = max((int(index.num_unindexed_rows or 0) for t in tables for index in t.list_indices()), default=0)
    if not rows:
        return Appends()
    # The small fragments too, so that the write path's backstop (OPTIMIZE_EVERY) counts them
    # in a process without the background job (a command, a library user).
    small = max(int(t.stats().get("fragment_stats", {}).get("num_small_fragments", 1)) for t in tables)
    return Appends(fragments=max(1, small), rows=rows, since=time.monotonic() - FOLD_AFTER_S)


# The ANN index: IVF partitions of RaBitQ codes (1 bit a dimension, ~65 B a row with its row id
# and factors), each query's candidates re-ranked by their stored vectors (``lance_queries.REFINE``).
# It replaced IVF-HNSW-SQ (8-bit codes and graph links, ~580 B a row), whose partitions must sit
# in LanceDB's index cache: at 100k facts (a 55 MB index) with the memory budget's 32 MiB, a
# filtered top-40 took 160 ms p50, 19 ms with 64 MiB. IVF-RQ with re-ranking, same 32 MiB: 21 ms,
# 0.912 of the exact top-40 (IVF-HNSW-SQ 0.902), built in 34 s (2026-11-29, 2 busy cores, 140
# queries the choice was not made on). IVF-SQ: 29 ms, 0.915, built in 143 s; IVF-PQ (48 codes): 35
# ms, 0.68 (0.91 re-ranked), built in 523 s.
ANN_INDEX_TYPE = "IvfRq"


def _ann_index(table: Any) -> Any:
    """The table's ANN index (LanceDB's IndexConfig), or None."""
    return next((idx for idx in table.list_indices() if "vector" in idx.columns), None)


def ann_segments(table: Any) -> int | None:
    """How many segments the table's ANN index has (None: it has none)."""
    index = _ann_index(table)
    return None if index is None else int(index.num_segments)


def ann_due(table: Any, rows: int, min_rows: int) -> tuple[bool, str]:
    """Whether to build the ANN index now (once the table has ``min_rows``, and afresh once
    optimizes have split it into more than MAX_SEGMENTS segments or when it is of another type: a
    store made before IVF-RQ), and how to say why ("": the first build)."""
    index = _ann_index(table)
    segments = None if index is None else int(index.num_segments)
    older = index is not None and str(index.index_type) != ANN_INDEX_TYPE
    if (segments is None and rows < min_rows) or (
        segments is not None and segments <= MAX_SEGMENTS and not older
    ):
        return False, ""
    return True, f" afresh ({'another type' if older else f'{segments} segments'})" if segments else ""


def build_ann_index(path: Path, table: str, *, afresh: str) -> None:
    """Build the ANN index of the table ``table`` of the LanceDB directory ``path`` (``afresh``:
    why it is built again, "" for the first) in a worker process (``store.worker_process``),
    which commits it beside the server's appends, rows added meanwhile searched exactly until a
    fold; the server checks the new version out after. Built in the server, at 100k facts it
    raised the server's RSS from ~500 to 612 MB at its peak (2026-12-01, a server over MCP,
    sampled every 0.5 s)."""
    in_worker(_built, {"path": str(path), "table": table, "replace": bool(afresh)}, what="index")
    log.info("built the %s table's ANN vector index%s", table, afresh)


def _built(given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """In the worker: ``build_ann_index``."""
    from lancedb.index import IvfRq

    from hippograph.store.lance_tables import given_table

    table = given_table(given)
    table.create_index("vector", config=IvfRq(distance_type="cosine"), replace=bool(given["replace"]))
    return {}


def fold(path: Path, table: Any, keep: timedelta) -> None:
    """Fold the table's appends into its indexes, compact its files and drop its versions older
    than ``keep`` (LanceDB's ``optimize``): in this process for a table without an ANN index (a
    small one), in a worker process (``store.worker_process``) for one with, whose new version
    this process then checks out (its caller holds the write lock: nothing is appended
    meanwhile). Right after the ANN index was built afresh, a fold of the facts' table at 100k
    facts raised the server's RSS from 362 to 479 MB at its peak (2026-12-01, in process)."""
    if _ann_index(table) is None:
        table.optimize(cleanup_older_than=keep)
        return
    in_worker(_folded, {"path": str(path), "table": table.name, "keep_s": keep.total_seconds()}, what="fold")
    table.checkout_latest()


def _folded(given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """In the worker: ``fold``."""
    from hippograph.store.lance_tables import given_table

    table = given_table(given)
    table.optimize(cleanup_older_than=timedelta(seconds=float(given["keep_s"])))
    return {}
