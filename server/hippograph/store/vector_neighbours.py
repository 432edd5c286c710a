"""Every row's nearest rows by meaning, among a set: the vector side of the graph topics come from.

The vectors are read a batch at a time and kept as 8-bit unit vectors (384 bytes a row: 38 MB
at 100k rows; the cosine they give is within ~0.01 of the exact one). Up to ``EXACT_ROWS`` rows
each row is compared with every other, a block at a time. Above, the rows are first grouped
into cells (spherical k-means on a sample, ~sqrt(n) cells), and each row is compared with the
rows of its own cell and of the ``_PROBED`` cells nearest it: the cost grows about as
n * sqrt(n), not n squared, and a row may miss a neighbour that lies across a cell border.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from hippograph.store.worker_process import in_worker

# Up to this many rows, every pair is compared (20k rows: ~1.5e11 multiply-adds, a few seconds).
EXACT_ROWS = 20_000
# Cells of the similarity matrix computed at once (float32: 4 MiB; with the partition's int64
# positions a block holds ~12 MiB: at 1 << 22, ~110 MB at the peak of a topics run at 6k facts).
_BLOCK_CELLS = 1 << 20
_SCALE = 127.0  # int8 unit vectors: components times this
_KMEANS_ROUNDS = 8
_SAMPLE_PER_CELL = 20  # rows of the k-means sample per cell
_PROBED = 6  # cells a row's candidates come from: its own and the nearest others
_SEED = 7


class Neighbours(NamedTuple):
    """Each of ``ids``' nearest others: pairs of row numbers (``src`` -> ``dst``, int32) and
    their cosine similarity (float32)."""

    ids: list[str]
    src: np.ndarray
    dst: np.ndarray
    similarity: np.ndarray


def read_unit_int8(table: Any, clause: str | None, dim: int) -> tuple[list[str], np.ndarray]:
    """The ids of a LanceDB table's rows that ``clause`` admits, and their vectors as 8-bit unit
    vectors, read a batch at a time (no float copy of the whole table is ever held)."""
    query = table.search().select(["id", "vector"]).limit(None)
    ids: list[str] = []
    parts: list[np.ndarray] = []
    for batch in (query.where(clause) if clause else query).to_batches():
        if not batch.num_rows:
            continue
        ids += [str(rid) for rid in batch.column("id").to_pylist()]
        flat = np.asarray(batch.column("vector").flatten(), dtype=np.float32).reshape(-1, dim)
        parts.append(quantised(flat))
    return ids, np.concatenate(parts) if parts else np.empty((0, dim), dtype=np.int8)


def lance_neighbours(path: Path, table: str, clause: str | None, dim: int, k: int) -> Neighbours:
    """``nearest`` over the rows of the LanceDB table ``table`` in the directory ``path`` that
    ``clause`` admits, read and compared by a worker process (``store.worker_process``): in the
    server, at 100k facts, reading and comparing them raised its RSS from 349 to 445 MB at the
    peak and kept 413 after (the 8-bit vectors, 38 MB, and what LanceDB's reads left in its
    allocators), 2026-12-01."""
    given = {"path": str(path), "table": table, "clause": clause or "", "dim": dim, "k": k}
    found = in_worker(_read_and_compared, given, what="neighbours")
    ids = [str(fid) for fid in found["ids"].tolist()]
    return Neighbours(ids, found["src"], found["dst"], found["similarity"])


def _read_and_compared(given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """In the worker: ``lance_neighbours``' answer, as arrays."""
    from hippograph.store.lance_tables import given_table  # LanceDB: in the worker only

    table = given_table(given)
    near = nearest(*read_unit_int8(table, str(given["clause"]) or None, int(given["dim"])), int(given["k"]))
    ids = np.asarray(near.ids, dtype=str)
    return {"ids": ids, "src": near.src, "dst": near.dst, "similarity": near.similarity}


def nearest(ids: list[str], units: np.ndarray, k: int) -> Neighbours:
    """Each row's ``k`` most similar other rows of ``units`` (8-bit unit vectors)."""
    count = len(ids)
    k = min(k, count - 1)
    if k < 1:
        empty = np.empty(0, dtype=np.int32)
        return Neighbours(ids, empty, empty, np.empty(0, dtype=np.float32))
    if count <= EXACT_ROWS:
        src, dst, sim = _exact(units, np.arange(count), np.arange(count), k)
    else:
        src, dst, sim = _by_cells(units, k)
    return Neighbours(ids, src, dst, sim)


def quantised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    return np.round(unit * _SCALE).astype(np.int8)


def _floats(units: np.ndarray) -> np.ndarray:
    return units.astype(np.float32) / _SCALE


def _exact(
    units: np.ndarray, rows: np.ndarray, candidates: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of ``rows`` (row numbers), its ``k`` nearest among ``candidates``, which begin
    with ``rows`` in the same order (so a row is left out of its own neighbours by position)."""
    k = min(k, len(candidates) - 1)
    if k < 1:
        empty = np.empty(0, dtype=np.int32)
        return empty, empty, np.empty(0, dtype=np.float32)
    against = _floats(units[candidates]).T
    step = max(1, _BLOCK_CELLS // len(candidates))
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for start in range(0, len(rows), step):
        block = rows[start : start + step]
        sims = _floats(units[block]) @ against
        sims[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf  # not itself
        near = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        found.append(
            (
                np.repeat(block, k).astype(np.int32),
                candidates[near].ravel().astype(np.int32),
                np.take_along_axis(sims, near, axis=1).ravel().astype(np.float32),
            )
        )
    return tuple(np.concatenate(parts) for parts in zip(*found, strict=True))  # type: ignore[return-value]


def _by_cells(units: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_exact`` within cells: each cell's rows against the rows of the ``_PROBED`` cells
    nearest its centre (its own first)."""
    count = len(units)
    cells = max(2, int(np.sqrt(count)))
    centres = _kmeans(units, cells)
    home = np.empty(count, dtype=np.int32)
    step = max(1, _BLOCK_CELLS // cells)
    for start in range(0, count, step):
        home[start : start + step] = np.argmax(_floats(units[start : start + step]) @ centres.T, axis=1)
    members = [np.flatnonzero(home == cell) for cell in range(cells)]
    probed = np.argsort(-(centres @ centres.T), axis=1)[:, :_PROBED]
    found = [
        _exact(units, members[cell], np.concatenate([members[c] for c in probed[cell]]), k)
        for cell in range(cells)
        if len(members[cell])
    ]
    return tuple(np.concatenate(parts) for parts in zip(*found, strict=True))  # type: ignore[return-value]


def _kmeans(units: np.ndarray, cells: int) -> np.ndarray:
    """``cells`` unit centres of spherical k-means on a sample of the rows (seeded: the same rows
    give the same cells)."""
    rng = np.random.default_rng(_SEED)
    sample = _floats(units[rng.choice(len(units), min(len(units), cells * _SAMPLE_PER_CELL), replace=False)])
    centres = sample[rng.choice(len(sample), cells, replace=False)]
    for _ in range(_KMEANS_ROUNDS):
        nearest_centre = np.argmax(sample @ centres.T, axis=1)
        sums = np.zeros_like(centres)
        np.add.at(sums, nearest_centre, sample)
        empty = ~sums.any(axis=1)
        sums[empty] = centres[empty]  # a cell that lost every row keeps its centre
        centres = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centres
