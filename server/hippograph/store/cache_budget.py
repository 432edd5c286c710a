"""One memory budget for everything the stores keep in RAM for speed, split among them.

A server's memory is the code and models it loads (~350-430 MB: Python, onnxruntime, LanceDB,
spaCy) plus what its stores cache. Each cache reads through to disk when full, so its size
trades speed, never correctness; together they stay within ``HIPPOGRAPH_MEMORY_BUDGET_BYTES``
whatever the memory's size. Before the budget, the separate bounds added up to ~460 MiB (the
graph's page cache 128, LanceDB's index cache 256, ...), enough to double a server at 1M facts.

The shares, and why: the graph's page cache gets the most because every remember's changes
stay pinned in it until a checkpoint (``KuzuSession._settle``) and a checkpoint needs room of
its own (at least 32 MiB with ladybug); the vector index's pages (IVF partitions, full-text
and scalar indexes) are what keeps a search near its floor past ~100k facts; the entities'
vectors are searched in numpy while they fit their share (~0.1 ms, against a LanceDB query's
3-5 ms floor); recent facts save a graph read on a hit; SQLite's and LanceDB's metadata
caches need little.
"""

from __future__ import annotations

from dataclasses import dataclass

from hippograph.config import MEMORY_BUDGET_MIN

# The graph engine fails its checkpoints with a page cache below this (MEMORY_BUDGET_MIN's 3/8).
GRAPH_PAGES_MIN = 32 << 20


@dataclass(frozen=True)
class CacheBudget:
    """Bytes for each of the stores' caches."""

    graph_pages: int  # Kùzu's buffer pool
    vector_index: int  # LanceDB's index cache
    entity_vectors: int  # the entities' vectors held for numpy (store.vector_matrix)
    facts: int  # facts read or written lately (store.fact_cache)
    graph_index: int  # SQLite's page cache of the graph index (store.graph_index)
    vector_metadata: int  # LanceDB's manifests and fragment lists

    @classmethod
    def split(cls, total: int) -> CacheBudget:
        """``total`` bytes in the shares of the module doc (3/8, 1/4, 1/8, 1/8, 1/16, 1/16)."""
        if total < MEMORY_BUDGET_MIN:
            raise ValueError(
                f"a memory budget below {MEMORY_BUDGET_MIN >> 20} MiB leaves the graph too little"
            )
        eighth, sixteenth = total // 8, total // 16
        return cls(
            graph_pages=max(GRAPH_PAGES_MIN, 3 * eighth),
            vector_index=2 * eighth,
            entity_vectors=eighth,
            facts=eighth,
            graph_index=sixteenth,
            vector_metadata=sixteenth,
        )


DEFAULT_SHARES = CacheBudget.split(128 << 20)  # at Settings.memory_budget_bytes' default


def budget_for(graph_pages: int) -> int:
    """The smallest budget, in bytes, whose graph share is at least ``graph_pages``."""
    return max(MEMORY_BUDGET_MIN, -(-graph_pages * 8 // 3))
