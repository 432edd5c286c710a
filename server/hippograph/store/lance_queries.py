"""LanceDB queries awaited in one step on LanceDB's event loop, not one step per call.

LanceDB's synchronous API runs each call on its background event loop and waits for it: a
filtered vector or full-text query and reading its rows took 6 such round trips (the table's
schema alone is fetched 3 times), so a search made 12. Each round trip is a hand-over between
threads, ~0.25 ms on 2 busy cores. The same query built with LanceDB's asynchronous API and
awaited as one coroutine makes one. Measured on a 6k-fact table (2026-11-30, 200 queries): a
filtered top-40 vector query 5.6-6.3 -> 4.3-4.6 ms p50, a full-text one 3.7-4.3 -> 2.1-2.5 ms; the
same rows (full-text rows of equal score come back in any order, either way). Reading rows by
filter (``scan``: the vectors of a search's candidates) makes one hand-over in place of three.

The synchronous table keeps its asynchronous one as ``_table`` (lancedb 0.40, the pinned minor
version); tests/test_lance_queries.py compares both APIs' answers, so a release that moves it
fails there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

# With the ANN index (``lance_upkeep.ANN_INDEX_TYPE``), probe 20 partitions and re-rank 4x the
# candidates asked for by their stored vectors: the 1-bit codes alone found 0.70 of the exact
# top-40 at 100k facts, re-ranked 0.91, for ~7 ms more (14 -> 21 ms p50; 2026-11-29).
NPROBES = 20
REFINE = 4


def _run(query: Any) -> Any:
    """``query``'s rows as an Arrow table, awaited on LanceDB's loop (where its sync API runs)."""
    return awaited(_start(query))


def _start(query: Any) -> Future[Any]:
    """``query`` begun on LanceDB's loop: its rows as an Arrow table, once the future is done."""
    from lancedb.background_loop import LOOP  # lancedb is loaded: the table came from it

    async def rows() -> Any:
        return await query.to_arrow()

    return asyncio.run_coroutine_threadsafe(rows(), LOOP.loop)


def awaited(begun: Future[Any]) -> Any:
    """What a query begun by ``_start`` returns, once it is done (cancelled if the wait is cut short,
    as LanceDB's own wait does)."""
    try:
        return begun.result()
    except BaseException:
        begun.cancel()
        raise


def nearest_rows(
    table: Any,
    vector: np.ndarray | Sequence[np.ndarray],
    k: int,
    clause: str | None,
    columns: Sequence[str],
) -> Any:
    """``columns`` (``_distance`` among them if asked) of the ``k`` rows of ``table`` nearest
    ``vector`` by cosine among those ``clause`` admits (filtered first), as an Arrow table; for a
    list of vectors, the ``k`` nearest each, its number in ``query_index``."""
    query = table._table.query().nearest_to(vector).distance_type("cosine").limit(k)
    query = query.nprobes(NPROBES).refine_factor(REFINE).select(list(columns))
    return _run(query.where(clause) if clause else query)


def text_rows(table: Any, text: str, k: int, clause: str | None, columns: Sequence[str]) -> Future[Any]:
    """``columns`` (``_score`` among them if asked) of the ``k`` rows of ``table`` whose text best
    matches ``text`` by BM25 among those ``clause`` admits (filtered first), as an Arrow table:
    begun, not awaited. A search embeds its query meanwhile: at 5k facts a BM25 query took ~2.2 ms
    and embedding the query ~2.6, one after the other 5.7 ms, side by side 4.0; a search (the same
    process, runs alternated) 11.05 ms p50 against 11.79, at 100k facts 44.0 against 47.7
    (2026-12-01)."""
    query = table._table.query().nearest_to_text(text).limit(k).select(list(columns))
    return _start(query.where(clause) if clause else query)


def scan(table: Any, clause: str | None, columns: Sequence[str]) -> Any:
    """``columns`` of the rows of ``table`` that ``clause`` admits (all without one), as an Arrow
    table."""
    query = table._table.query().select(list(columns))
    return _run(query.where(clause) if clause else query)
