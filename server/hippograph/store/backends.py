"""Which engines hold a memory: the one place that names them (see ``seam``).

No ``store_url``: the embedded engines in the data dir, a Kùzu file (``graph.kuzu``) and a
LanceDB directory (``vectors/``). A ``postgresql://`` URL names the shared backend, which this
version does not have yet: it is refused, saying so, before anything is opened.
"""

from __future__ import annotations

from hippograph.config import Settings
from hippograph.domain.errors import StoreError
from hippograph.store.gap_log import GapLog
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.seam import GapStore, GraphStore, TopicStore, VectorStore
from hippograph.store.topic_table import TopicTable
from hippograph.store.vectors import LanceVectorStore


def _embedded(settings: Settings) -> None:
    """Refuse a store URL: only the embedded engines exist in this version."""
    if settings.store_url is not None:
        raise StoreError(
            "HIPPOGRAPH_STORE_URL names a PostgreSQL store, which this version of hippograph cannot "
            "use yet: unset it to keep the memory in the data dir"
        )


def open_graph(settings: Settings) -> GraphStore:
    """The graph store ``settings`` name, opened (created on first use)."""
    _embedded(settings)
    return KuzuGraphStore(
        settings.graph_file,
        max_db_size=settings.kuzu_max_db_size,
        buffer_pool_bytes=settings.kuzu_buffer_pool_bytes,
        fact_cache_bytes=settings.cache_bytes,
    )


def open_vectors(settings: Settings, *, dim: int, model: str) -> VectorStore:
    """The vector index ``settings`` name, for vectors of ``dim`` by ``model``, opened."""
    _embedded(settings)
    return LanceVectorStore(settings.data_dir / "vectors", dim=dim, model=model)


def open_topics(settings: Settings) -> TopicStore:
    """The topics store ``settings`` name (derived structure; see ``topic_table``), opened."""
    _embedded(settings)
    return TopicTable(settings.data_dir / "topics.sqlite")


def open_gaps(settings: Settings) -> GapStore:
    """The log of questions memory could not answer (see ``gap_log``), opened."""
    _embedded(settings)
    return GapLog(settings.data_dir / "gaps.sqlite")
