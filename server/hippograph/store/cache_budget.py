"""One memory budget for everything the stores keep in RAM for speed, split among them.

A server's memory is the code and models it loads (~350-430 MB: Python, onnxruntime, LanceDB,
spaCy) plus what its stores cache. Each cache reads through to disk when full, so its size
trades speed, never correctness; together they stay within ``HIPPOGRAPH_MEMORY_BUDGET_BYTES``
whatever the memory's size. Before the budget, the separate bounds added up to ~460 MiB (the
graph's page cache 128, LanceDB's index cache 256, ...), enough to double a server at 1M facts.

The shares, and why. Half is the graph's page cache: every remember's changes stay pinned in it
until a checkpoint (``KuzuSession._settle``), a checkpoint needs room of its own (at least 32
MiB with ladybug), and a smaller cache costs disk as well as speed: it is checkpointed more
often, and a rebuild copies the graph in slices as long as it allows (the 6k-fact "people"
bench graph rebuilt into 23.7 MB with 48 MiB, 21.2 with 64, 20.4 with 128; 2026-11-29). A
quarter is the vector index's pages (IVF partitions, full-text and scalar indexes), which keep
a search near its floor past ~100k facts. Then the entities' and facts' vectors held in numpy
while they fit (1/8, ``held_vectors``: ~0.1-0.3 ms against a LanceDB query's 3-5 ms floor; a
remember's similar facts are found there), recent facts (1/16: a hit saves a graph read), and
SQLite's and LanceDB's metadata caches (1/32 each).
"""

from __future__ import annotations

from dataclasses import dataclass

from hippograph.config import MEMORY_BUDGET_MIN


@dataclass(frozen=True)
class CacheBudget:
    """Bytes for each of the stores' caches."""

    graph_pages: int  # Kùzu's buffer pool
    vector_index: int  # LanceDB's index cache
    held_vectors: int  # the entities' and facts' vectors held for numpy (store.held_vectors)
    facts: int  # facts read or written lately (store.fact_cache)
    graph_index: int  # SQLite's page cache of the graph index (store.graph_index)
    vector_metadata: int  # LanceDB's manifests and fragment lists

    @classmethod
    def split(cls, total: int) -> CacheBudget:
        """``total`` bytes in the shares of the module doc (1/2, 1/4, 1/8, 1/16, 1/32, 1/32)."""
        if total < MEMORY_BUDGET_MIN:
            raise ValueError(
                f"a memory budget below {MEMORY_BUDGET_MIN >> 20} MiB leaves the graph too little"
            )
        return cls(
            graph_pages=total // 2,
            vector_index=total // 4,
            held_vectors=total // 8,
            facts=total // 16,
            graph_index=total // 32,
            vector_metadata=total // 32,
        )


DEFAULT_SHARES = CacheBudget.split(128 << 20)  # at Settings.memory_budget_bytes' default


def budget_for(graph_pages: int) -> int:
    """The smallest budget, in bytes, whose graph share is at least ``graph_pages``."""
    return max(MEMORY_BUDGET_MIN, 2 * graph_pages)
