"""Whole-graph reads for export and stats: every edge, and how many facts, entities and edges there are."""

from __future__ import annotations

from hippograph.domain.errors import InternalError
from hippograph.domain.models import FACT_EDGES, EdgeType
from hippograph.store.graph_values import EdgeRow
from hippograph.store.index_build import RELATES_PROPS
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.rows import edge_props


class GraphCensus:
    """Reads of the whole graph (the read model holds its shape, not every property)."""

    def __init__(self, session: KuzuSession) -> None:
        self._session = session

    def all_edges(self) -> list[EdgeRow]:
        """Every edge in the graph (fact-fact, ABOUT, RELATES, HAS_TAG), for export and views."""
        run = self._session.run
        edges: list[EdgeRow] = []
        for edge_type in FACT_EDGES:
            names = list(self._session.types.of(edge_type))
            props = self._session.types.returning("r", edge_type)
            rows = run(f"MATCH (a:Fact)-[r:{edge_type}]->(b:Fact) RETURN a.id AS src, b.id AS dst, {props}")
            edges += [
                EdgeRow(edge_type, r["src"], r["dst"], edge_props({n: r[n] for n in names})) for r in rows
            ]
        rows = run("MATCH (f:Fact)-[r:ABOUT]->(e:Entity) RETURN f.id AS src, e.id AS dst, r.role AS role")
        edges += [EdgeRow(EdgeType.ABOUT, r["src"], r["dst"], {"role": r["role"]}) for r in rows]
        props = self._session.types.returning("r", "Relation", RELATES_PROPS)
        rows = run(f"MATCH (r:Relation) RETURN r.src AS src, r.dst AS dst, {props}")
        edges += [
            EdgeRow(EdgeType.RELATES, r["src"], r["dst"], edge_props({n: r[n] for n in RELATES_PROPS}))
            for r in rows
        ]
        rows = run("MATCH (f:Fact)-[:HAS_TAG]->(t:Tag) RETURN f.id AS src, t.name AS tag")
        edges += [EdgeRow(EdgeType.HAS_TAG, r["src"], r["tag"], {}) for r in rows]
        return edges

    def count_by(self, column: str) -> dict[str, int]:
        """Fact counts grouped by kind, status or scope."""
        if column not in ("kind", "status", "scope"):
            raise InternalError(f"cannot group facts by {column!r}")
        rows = self._session.run(f"MATCH (f:Fact) RETURN f.{column} AS key, count(*) AS n")
        return {r["key"]: int(r["n"]) for r in rows}

    def counts(self) -> dict[str, int]:
        run = self._session.run
        facts = run("MATCH (f:Fact) RETURN count(f) AS n")[0]["n"]
        entities = run("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]
        edges = run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
        edges += run("MATCH (r:Relation) RETURN count(r) AS n")[0]["n"]  # RELATES, rows since v7
        return {"facts": int(facts), "entities": int(entities), "edges": int(edges)}
