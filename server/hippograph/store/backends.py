"""Which engines hold a memory: the one place that names them (see ``seam``).

No ``store_url``: the embedded engines in the data dir, a Kùzu file (``graph.kuzu``), a LanceDB
directory (``vectors/``) and two SQLite files (topics, gaps). A ``postgresql://`` URL: every
store in that database (issue 27; docs/postgres.md), sharing the graph's pool of connections,
which the graph closes last; the data dir keeps only local things.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippograph.config import Settings
from hippograph.store.cache_budget import CacheBudget
from hippograph.store.gap_log import GapLog
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.seam import GapStore, GraphStore, TopicStore, VectorStore
from hippograph.store.topic_table import TopicTable
from hippograph.store.vectors import LanceVectorStore

if TYPE_CHECKING:
    from hippograph.store.pg_database import PgDatabase


def open_graph(settings: Settings) -> GraphStore:
    """The graph store ``settings`` name, opened (created on first use)."""
    if settings.store_url is not None:
        from hippograph.store.pg_database import PgDatabase  # the postgres extra's driver
        from hippograph.store.pg_graph import PgGraphStore

        database = PgDatabase(
            settings.store_url.get_secret_value(), max_connections=settings.store_connections
        )
        return PgGraphStore(database, owns_database=True)
    return KuzuGraphStore(
        settings.graph_file,
        max_db_size=settings.kuzu_max_db_size,
        cache=CacheBudget.split(settings.memory_budget_bytes),
    )


def open_vectors(settings: Settings, graph: GraphStore, *, dim: int, model: str) -> VectorStore:
    """The vector index ``settings`` name (beside ``graph``), for vectors of ``dim`` by ``model``, opened."""
    if settings.store_url is not None:
        from hippograph.store.pg_vectors import PgVectorStore

        return PgVectorStore(_database(graph), dim=dim, model=model)
    cache = CacheBudget.split(settings.memory_budget_bytes)
    return LanceVectorStore(settings.data_dir / "vectors", dim=dim, model=model, cache=cache)


def open_topics(settings: Settings, graph: GraphStore) -> TopicStore:
    """The topics store ``settings`` name (derived structure; see ``topic_table``), opened."""
    if settings.store_url is not None:
        from hippograph.store.pg_topics import PgTopicTable

        return PgTopicTable(_database(graph))
    return TopicTable(settings.data_dir / "topics.sqlite")


def open_gaps(settings: Settings, graph: GraphStore) -> GapStore:
    """The log of questions memory could not answer (see ``gap_log``), opened."""
    if settings.store_url is not None:
        from hippograph.store.pg_gaps import PgGapLog

        return PgGapLog(_database(graph))
    return GapLog(settings.data_dir / "gaps.sqlite")


def _database(graph: GraphStore) -> PgDatabase:
    """The pool of the PostgreSQL graph the other stores of its memory share."""
    from hippograph.store.pg_graph import PgGraphStore

    if not isinstance(graph, PgGraphStore):
        raise TypeError("a store URL's stores open beside its PostgreSQL graph")
    return graph.database
