"""The fact graph topics are found in, held as arrays, and its communities.

Nodes are row numbers (0 .. n-1); edges are added in batches of arrays and summed by pair. Its
communities come from Leiden (graspologic-native, MIT, in Rust) run on the graph's CSR arrays,
which it reads in place; a community over ``MAX_TOPIC`` nodes is split by running Leiden again
on its own subgraph (at twice the resolution while it will not split), so a topic stays
something a reader takes in at a glance however large the memory grows. At 100k facts and ~1M
edges the arrays take ~25 MB, where a list of Python tuples took ~100.

All of it runs in a worker process of its own (``store.worker_process``), which hands all its
memory back when it exits: the pairs summed into CSR arrays, Leiden, each community ordered most
central first. Leiden run in the server took ~110 MB more at its peak at 100k facts, and left
~30 MB of the server's heap in fragments no ``malloc_trim`` returns (2026-11-30); building the
CSR arrays in the server still raised its peak by ~75 MB (411 -> 486 MB, 2026-12-01).
"""

from __future__ import annotations

import numpy as np

from hippograph.domain.topics import MAX_TOPIC, MIN_TOPIC
from hippograph.store.worker_process import in_worker

_SEED = 7  # Leiden is randomised; a fixed seed makes the same graph give the same topics
_MAX_RESOLUTION = 64.0

Csr = tuple[np.ndarray, np.ndarray, np.ndarray]  # indptr (int64), indices (int32), data (float64)


class FactGraph:
    """An undirected weighted graph over ``size`` nodes, built by adding edges."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(
        self, src: np.ndarray | list[int], dst: np.ndarray | list[int], weight: np.ndarray | list[float]
    ) -> None:
        """Add edges: ``src[i]`` -- ``dst[i]`` weighing ``weight[i]`` (a repeated pair adds up)."""
        edges = (
            np.asarray(src, dtype=np.int32),
            np.asarray(dst, dtype=np.int32),
            np.asarray(weight, dtype=np.float32),
        )
        if len(edges[0]):
            self._parts.append(edges)

    def communities(self) -> list[np.ndarray]:
        """Groups of ``MIN_TOPIC`` to ``MAX_TOPIC`` nodes, each most central first (the greatest
        weight of edges inside it). A node with no edge is in none."""
        return _in_worker(self.size, self._parts) if self._parts else []


def _in_worker(size: int, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """The communities (``_communities``), found by a worker process (``store.worker_process``).
    The edges go to it as they were added, not joined in memory beside them."""
    edges = {f"{c}{i}": part[k] for i, part in enumerate(parts) for k, c in enumerate("sdw")}
    found = in_worker(_communities, {**edges, "size": size, "parts": len(parts)}, what="topic")
    ends = found["ends"]
    return np.split(found["nodes"], ends[:-1]) if len(ends) else []


def _communities(given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """In the worker: the groups of the edges ``given``, ``nodes`` end to end, and where each
    group ``ends``."""
    size = int(given["size"])
    graph = _csr(size, [(given[f"s{i}"], given[f"d{i}"], given[f"w{i}"]) for i in range(int(given["parts"]))])
    given.clear()
    groups = _central_first(graph, _groups(graph)) if len(graph[1]) else []
    nodes = np.concatenate(groups) if groups else np.empty(0, dtype=np.int64)
    return {"nodes": nodes, "ends": np.cumsum([len(g) for g in groups], dtype=np.int64)}


def _csr(size: int, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Csr:
    """The graph as symmetric CSR arrays, each pair's weights summed (intermediates dropped as
    soon as they are used: at 1M edges the peak is ~100 MB)."""
    a, b, w = (np.concatenate(column) for column in zip(*parts, strict=True))
    keep = (a != b) & (w > 0)
    key = np.minimum(a, b)[keep].astype(np.int64) * size + np.maximum(a, b)[keep]
    w = w[keep]
    del a, b, keep
    keys, inverse = np.unique(key, return_inverse=True)
    del key
    summed = np.bincount(inverse, weights=w).astype(np.float32)
    del inverse, w
    low, high = (keys // size).astype(np.int32), (keys % size).astype(np.int32)
    del keys
    rows, cols = np.concatenate([low, high]), np.concatenate([high, low])
    return _from_pairs(rows, cols, np.concatenate([summed, summed]), size)


def _central_first(graph: Csr, groups: list[np.ndarray]) -> list[np.ndarray]:
    """Each group's nodes, the greatest weight of edges inside the group first (ties by node)."""
    indptr, indices, data = graph
    size = len(indptr) - 1
    label = np.full(size, -1, dtype=np.int64)
    for number, group in enumerate(groups):
        label[group] = number
    rows = np.repeat(np.arange(size), np.diff(indptr))
    inside = (label[rows] == label[indices]) & (label[rows] >= 0)
    strength = np.bincount(rows[inside], weights=data[inside], minlength=size)
    return [group[np.lexsort((group, -strength[group]))] for group in groups]


def _groups(graph: Csr) -> list[np.ndarray]:
    """Leiden's communities of ``graph``, split down to ``MAX_TOPIC``, those of ``MIN_TOPIC`` or more."""
    size = len(graph[0]) - 1
    return [group for group in _split(graph, np.arange(size), 1.0) if len(group) >= MIN_TOPIC]


def _from_pairs(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, size: int) -> Csr:
    order = np.lexsort((cols, rows))
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=size), out=indptr[1:])
    return indptr, cols[order].astype(np.int32), data[order].astype(np.float64)


def _split(graph: Csr, nodes: np.ndarray, resolution: float) -> list[np.ndarray]:
    """The communities of ``graph`` (whose node i is ``nodes[i]``), as arrays of ``nodes``, each
    at most ``MAX_TOPIC`` strong: those of Leiden, the larger ones split again."""
    indptr, indices, data = graph
    size = len(indptr) - 1
    if not len(indices):  # no edges: singletons, no topic
        return [nodes[i : i + 1] for i in range(size)]
    from graspologic_native import leiden_csr  # in the worker only (``_communities``)

    _, found = leiden_csr(indptr, indices, data, size, resolution=resolution, seed=_SEED)
    label = np.fromiter((found[i] for i in range(size)), dtype=np.int64, count=size)
    parts = [np.flatnonzero(label == value) for value in np.unique(label)]
    if len(parts) == 1 and size > MAX_TOPIC:
        if resolution < _MAX_RESOLUTION:
            return _split(graph, nodes, resolution * 2)
        return [nodes[i : i + MAX_TOPIC] for i in range(0, size, MAX_TOPIC)]  # a clique of equals
    out: list[np.ndarray] = []
    for part in parts:
        out += [nodes[part]] if len(part) <= MAX_TOPIC else _split(_induced(graph, part), nodes[part], 1.0)
    return out


def _induced(graph: Csr, part: np.ndarray) -> Csr:
    """The subgraph of ``graph`` on the nodes ``part`` (sorted), renumbered 0 .. len(part)-1."""
    indptr, indices, data = graph
    local = np.full(len(indptr) - 1, -1, dtype=np.int64)
    local[part] = np.arange(len(part))
    starts, lengths = indptr[part], np.diff(indptr)[part]
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    entries = np.arange(int(lengths.sum())) + offsets
    rows = np.repeat(np.arange(len(part)), lengths)
    cols = local[indices[entries]]
    keep = cols >= 0
    return _from_pairs(rows[keep], cols[keep], data[entries][keep], len(part))
