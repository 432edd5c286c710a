"""The graph's edges in the memory's PostgreSQL database: ABOUT (fact -> entity, with a role),
the fact-to-fact links (SUPERSEDES, CONTRADICTS, DERIVED_FROM, RELATES_TO, CAUSES, NEXT, with
their properties as JSON), RELATES (entity -> entity) and tags (``hg_about``, ``hg_link``,
``hg_relates``, ``hg_tag``).

As in the embedded graph, an edge is made only between nodes that exist (a write naming a
missing end makes nothing), ABOUT and tag edges once however often they are asked for, and
fact links as often as they are written.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from hippograph.domain.errors import InternalError
from hippograph.domain.models import EDGE_PROPS, FACT_EDGES, EdgeType
from hippograph.store.pg_session import PgSession
from hippograph.store.rows import to_db_time
from hippograph.store.seam import FactLink, Relation

# An edge is made only between ends that exist (each %s is an end's id).
_FACT = "EXISTS (SELECT 1 FROM hg_fact WHERE id = %s)"
_ENTITY = "EXISTS (SELECT 1 FROM hg_entity WHERE id = %s)"


def _fact_edge(edge: str) -> EdgeType:
    """``edge`` as a fact-to-fact edge type (it is stored as a value, but must be one)."""
    if edge not in FACT_EDGES:
        raise InternalError(f"unknown fact edge {edge!r}")
    return EdgeType(edge)


def _props(names: Iterable[str], props: Mapping[str, Any]) -> str:
    """An edge's properties of ``names`` that are set, as JSON."""
    return json.dumps({n: props[n] for n in names if props.get(n) is not None})


class PgEdges(PgSession):
    """Edge writes and the edge reads of a single fact (its chain, one edge's presence)."""

    def link_about(self, fact_id: str, entity_id: str, role: str) -> None:
        self.link_about_many([(fact_id, entity_id, role)])

    def link_about_many(self, links: Sequence[tuple[str, str, str]]) -> None:
        """ABOUT edges from (fact id, entity id, role) rows the store does not hold yet."""
        if links:
            with self._conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO hg_about (fact, entity, role, created_at) SELECT %s, %s, %s, f.created_at "
                    f"FROM hg_fact f WHERE f.id = %s AND {_ENTITY} ON CONFLICT DO NOTHING",
                    [(fid, eid, role, fid, eid) for fid, eid, role in dict.fromkeys(links)],
                )

    def link_facts(self, edge: str, src: str, dst: str, now: datetime, **props: Any) -> None:
        self.link_facts_many(edge, [(src, dst, now, props)])

    def link_facts_many(self, edge: str, links: Sequence[FactLink]) -> None:
        """``edge`` edges from (source id, target id, time, properties) rows."""
        kind = _fact_edge(edge)
        if not links:
            return
        names = EDGE_PROPS[kind]
        rows = [
            (kind.value, src, dst, to_db_time(now), _props(names, props), src, dst)
            for src, dst, now, props in links
        ]
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO hg_link (type, src, dst, created_at, props) "
                f"SELECT %s, %s, %s, %s, %s::jsonb WHERE {_FACT} AND {_FACT}",
                rows,
            )

    def reweigh_relations(self, relation: str, weights: Sequence[tuple[str, str, float]]) -> None:
        """Set the weight of the RELATES_TO edges of ``relation``: (source id, target id, weight)."""
        if weights:
            with self._conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    "UPDATE hg_link SET props = jsonb_set(props, '{weight}', to_jsonb(%s::float8)) "
                    "WHERE type = 'RELATES_TO' AND src = %s AND dst = %s AND props->>'relation' = %s",
                    [(float(w), src, dst, relation) for src, dst, w in weights],
                )

    def link_entities(
        self, src: str, dst: str, predicate: str, weight: float, fact_id: str | None, now: datetime
    ) -> None:
        self.link_entities_many([Relation(src, dst, predicate, weight, fact_id, now)])

    def link_entities_many(self, relations: Sequence[Relation]) -> None:
        """RELATES edges between entities."""
        if relations:
            with self._conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO hg_relates (src, dst, predicate, weight, fact_id, created_at) "
                    f"SELECT %s, %s, %s, %s, %s, %s WHERE {_ENTITY} AND {_ENTITY}",
                    [
                        (
                            r.src,
                            r.dst,
                            r.predicate,
                            float(r.weight),
                            r.fact_id,
                            to_db_time(r.at),
                            r.src,
                            r.dst,
                        )
                        for r in relations
                    ],
                )

    def tag_fact(self, fact_id: str, tags: Iterable[str]) -> None:
        self.tag_facts([(fact_id, tag) for tag in tags])

    def tag_facts(self, tags: Sequence[tuple[str, str]]) -> None:
        """Tag edges from (fact id, tag) pairs the store does not hold yet."""
        if tags:
            with self._conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO hg_tag (fact, tag) SELECT %s, %s WHERE {_FACT} ON CONFLICT DO NOTHING",
                    [(fid, tag, fid) for fid, tag in dict.fromkeys(tags)],
                )

    def has_edge(self, edge: str, src: str, dst: str) -> bool:
        found = self._rows(
            "SELECT EXISTS (SELECT 1 FROM hg_link WHERE type = %s AND src = %s AND dst = %s)",
            (_fact_edge(edge).value, src, dst),
        )
        return bool(found[0][0])

    def chain(self, fact_id: str, edge: str, *, newer: bool, max_depth: int = 30) -> list[tuple[str, int]]:
        """Facts reachable along ``edge`` from ``fact_id`` (or into it when ``newer``), with hop
        counts (the fewest), nearest first."""
        near, far = ("dst", "src") if newer else ("src", "dst")
        rows = self._rows(
            "WITH RECURSIVE walk(id, hops) AS ("
            f"  SELECT {far}, 1 FROM hg_link WHERE type = %s AND {near} = %s"
            f"  UNION SELECT l.{far}, w.hops + 1 FROM walk w"
            f"  JOIN hg_link l ON l.{near} = w.id AND l.type = %s"
            "  WHERE w.hops < %s"
            ") SELECT id, min(hops) AS hops FROM walk WHERE id <> %s GROUP BY id ORDER BY hops, id",
            (_fact_edge(edge).value, fact_id, _fact_edge(edge).value, int(max_depth), fact_id),
        )
        return [(str(fid), int(hops)) for fid, hops in rows]

    def orphan_entities(self, gone: Collection[str] = ()) -> list[str]:
        """Entities no fact is about and no relation touches (the open transaction's purge of
        the facts ``gone`` is already seen here)."""
        rows = self._rows(
            "SELECT e.id FROM hg_entity e WHERE NOT EXISTS (SELECT 1 FROM hg_about a WHERE a.entity = e.id) "
            "AND NOT EXISTS (SELECT 1 FROM hg_relates r WHERE r.src = e.id OR r.dst = e.id) ORDER BY e.id"
        )
        return [str(eid) for (eid,) in rows]

    def delete_entities(self, entity_ids: Sequence[str]) -> None:
        """Delete entities and every edge they are an end of."""
        if entity_ids:
            ids = list(entity_ids)
            with self._conn() as conn:
                conn.execute("DELETE FROM hg_about WHERE entity = ANY(%s)", (ids,))
                conn.execute("DELETE FROM hg_relates WHERE src = ANY(%s) OR dst = ANY(%s)", (ids, ids))
                conn.execute("DELETE FROM hg_entity_key WHERE id = ANY(%s)", (ids,))
                conn.execute("DELETE FROM hg_entity_first WHERE id = ANY(%s)", (ids,))
                conn.execute("DELETE FROM hg_entity WHERE id = ANY(%s)", (ids,))
