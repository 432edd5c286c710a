"""The fact graph topics are found in, held as arrays, and its communities.

Nodes are row numbers (0 .. n-1); edges are added in batches of arrays and summed by pair. Its
communities come from Leiden (graspologic-native, MIT, in Rust) run on the graph's CSR arrays,
which it reads in place; a community over ``MAX_TOPIC`` nodes is split by running Leiden again
on its own subgraph (at twice the resolution while it will not split), so a topic stays
something a reader takes in at a glance however large the memory grows. At 100k facts and ~1M
edges the arrays take ~25 MB, where a list of Python tuples took ~100.

Leiden runs in a worker process of its own (``_work``, this interpreter: the arrays in from a
temporary file, the communities out on stdout, both as ``.npz``), which hands all its memory
back when it exits. Run in the server, at 100k facts it took ~110 MB more at its peak, and left
~30 MB of the server's heap in fragments no ``malloc_trim`` returns (2026-11-30).
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from hippograph.domain.topics import MAX_TOPIC, MIN_TOPIC

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
        graph = self._csr()
        if not len(graph[1]):
            return []
        groups = _in_worker(graph)
        label = np.full(self.size, -1, dtype=np.int64)
        for number, group in enumerate(groups):
            label[group] = number
        indptr, indices, data = graph
        rows = np.repeat(np.arange(self.size), np.diff(indptr))
        inside = (label[rows] == label[indices]) & (label[rows] >= 0)
        strength = np.bincount(rows[inside], weights=data[inside], minlength=self.size)
        # Arrays, not lists of Python ints (~110k of them at 100k facts, held through a consolidate).
        return [group[np.lexsort((group, -strength[group]))] for group in groups]

    def _csr(self) -> Csr:
        """The graph as symmetric CSR arrays, each pair's weights summed (intermediates dropped as
        soon as they are used: at 1M edges the peak is ~100 MB)."""
        if not self._parts:
            empty = np.empty(0, dtype=np.int32)
            return np.zeros(self.size + 1, dtype=np.int64), empty, empty.astype(np.float64)
        a, b, w = (np.concatenate(column) for column in zip(*self._parts, strict=True))
        keep = (a != b) & (w > 0)
        key = np.minimum(a, b)[keep].astype(np.int64) * self.size + np.maximum(a, b)[keep]
        w = w[keep]
        del a, b, keep
        keys, inverse = np.unique(key, return_inverse=True)
        del key
        summed = np.bincount(inverse, weights=w).astype(np.float32)
        del inverse, w
        low, high = (keys // self.size).astype(np.int32), (keys % self.size).astype(np.int32)
        del keys
        return _from_pairs(
            np.concatenate([low, high]),
            np.concatenate([high, low]),
            np.concatenate([summed, summed]),
            self.size,
        )


def _in_worker(graph: Csr) -> list[np.ndarray]:
    """The communities of ``MIN_TOPIC`` nodes or more (``_groups``), found by a worker process.

    The worker is this interpreter with ``-P`` (a client may start the server in a project whose
    own ``numpy.py`` would otherwise be imported first) and this package's root last on its path
    (found however the server was started, shadowing nothing)."""
    package_root = str(Path(__file__).resolve().parents[2])
    start = f"import sys; sys.path.append({package_root!r}); from {__name__} import _work; _work()"
    # The arrays go through a file, not a copy in memory beside them (~25 MB at 100k facts).
    with tempfile.TemporaryDirectory(prefix="hippograph-topics-") as work:
        arrays = Path(work) / "graph.npz"
        np.savez(arrays, indptr=graph[0], indices=graph[1], data=graph[2])
        done = subprocess.run(
            [sys.executable, "-P", "-c", start, str(arrays)],
            capture_output=True,
            check=False,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # no console window on Windows
        )
    if done.returncode:
        told = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"the topic worker failed (exit {done.returncode}): {' / '.join(told)}")
    found = np.load(io.BytesIO(done.stdout))
    ends = found["ends"]
    return np.split(found["nodes"], ends[:-1]) if len(ends) else []


def _groups(graph: Csr) -> list[np.ndarray]:
    """Leiden's communities of ``graph``, split down to ``MAX_TOPIC``, those of ``MIN_TOPIC`` or more."""
    size = len(graph[0]) - 1
    return [group for group in _split(graph, np.arange(size), 1.0) if len(group) >= MIN_TOPIC]


def _work() -> None:
    """The worker: a graph's arrays from the file named by its argument, its groups on stdout
    (``nodes`` end to end, and where each group ``ends``)."""
    got = np.load(sys.argv[1])
    groups = _groups((got["indptr"], got["indices"], got["data"]))
    out = io.BytesIO()
    nodes = np.concatenate(groups) if groups else np.empty(0, dtype=np.int64)
    np.savez(out, nodes=nodes, ends=np.cumsum([len(g) for g in groups], dtype=np.int64))
    sys.stdout.buffer.write(out.getbuffer())


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
    from graspologic_native import leiden_csr  # in the worker only (``_work``)

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
