"""The graph's shape as one caller sees it, read from the memory's PostgreSQL database: the
scope rule applied to every read, as ``index_view.IndexView`` applies it to the embedded graph's
index (same methods, same results, same order; ``tests/test_graph_views.py`` compares them).

A caller in a scope sees the facts and entities of that scope and of ``global``, nothing else:
every read drops each fact and entity outside ``scopes`` (and every edge with such an end)
before anything is counted or cut to a limit. ``scopes`` None: every scope (the owner's upkeep).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from hippograph.domain.errors import InternalError
from hippograph.domain.models import FACT_EDGES, EdgeType
from hippograph.store.graph_values import EdgeRow, distinct_scopes, edges_in_fact_order
from hippograph.store.index_view import AboutReads
from hippograph.store.pg_session import PgSession


class PgGraphView(AboutReads):
    """Reads of the graph in the database, restricted to ``scopes`` (None: every scope)."""

    def __init__(self, session: PgSession, scopes: Collection[str] | None) -> None:
        self._s = session
        self._scopes = None if scopes is None else sorted(set(scopes))

    def _in_scope(self, *aliases: str) -> tuple[str, list[Any]]:
        """SQL that keeps the rows whose ``aliases`` (tables with a scope) are seen, and its parameters."""
        if self._scopes is None:
            return "TRUE", []
        return " AND ".join(f"{a}.scope = ANY(%s)" for a in aliases), [self._scopes] * len(aliases)

    def _rows(self, query: str, params: Sequence[Any]) -> list[Any]:
        return self._s._rows(query, params)

    def _seen(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` (facts or entities) whose scope this view sees (all, when it sees every scope)."""
        wanted = set(ids)
        if self._scopes is None or not wanted:
            return wanted
        # Each id asked of its own table (a fact's starts f_, an entity's e_): 40 fact ids asked of
        # the entities too read every entity row against each (~1 ms of a 1.7 ms query).
        facts = sorted(i for i in wanted if i.startswith("f_"))
        entities = sorted(wanted.difference(facts))
        seen: set[str] = set()
        for table, asked in (("hg_fact", facts), ("hg_entity", entities)):
            if asked:
                rows = self._rows(
                    f"SELECT id FROM {table} WHERE id = ANY(%s) AND scope = ANY(%s)", (asked, self._scopes)
                )
                seen.update(str(node) for (node,) in rows)
        return seen

    def sees(self, node_id: str) -> bool:
        """The scope rule: a fact or entity is seen if its scope is."""
        return node_id in self._seen([node_id])

    def statuses(self, fact_ids: Iterable[str]) -> dict[str, str]:
        """The status of each of ``fact_ids`` that exists."""
        seen, params = self._in_scope("f")
        rows = self._rows(
            f"SELECT id, status FROM hg_fact f WHERE id = ANY(%s) AND {seen}", (list(set(fact_ids)), *params)
        )
        return {str(fid): str(status) for fid, status in rows}

    def _edges_touching(
        self, table: str, ends: str, columns: str, ids: Iterable[str], where: str = "TRUE", *where_params: Any
    ) -> list[Any]:
        """(seq, ``columns``) of the edges of ``table`` with either end among ``ids`` and both ends
        (rows of ``ends``) seen, in the order they were made."""
        seen, params = self._in_scope("a", "b")
        joins = "" if not params else f"JOIN {ends} a ON a.id = e.src JOIN {ends} b ON b.id = e.dst "
        query = (
            f"SELECT e.seq, {columns} FROM {table} e {joins}WHERE {where} AND {seen} "
            "AND (e.src = ANY(%s) OR e.dst = ANY(%s)) ORDER BY e.seq"
        )
        wanted = list(set(ids))
        return self._rows(query, (*where_params, *params, wanted, wanted))

    def fact_edges(self, fact_ids: Sequence[str], edge_types: Sequence[str] = FACT_EDGES) -> list[EdgeRow]:
        """Fact-to-fact edges touching ``fact_ids``, either direction: each fact's edges out, then
        in, in the order they were made."""
        unknown = set(edge_types) - set(FACT_EDGES)
        if unknown:
            raise InternalError(f"unknown fact edges {sorted(unknown)}")
        types = sorted(set(edge_types))
        rows = self._edges_touching(
            "hg_link",
            "hg_fact",
            "e.type, e.src, e.dst, e.created_at, e.props",
            fact_ids,
            "e.type = ANY(%s)",
            types,
        )
        order = edges_in_fact_order(fact_ids, ((r[0], r[2], r[3]) for r in rows))
        edges = {r[0]: r for r in rows}
        return [
            EdgeRow(edges[seq][1], edges[seq][2], edges[seq][3], _link_props(edges[seq][4], edges[seq][5]))
            for seq in order
        ]

    def _about(self, fact_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """(fact, entity, role) of the seen facts' ABOUT edges to seen entities, in the order made."""
        seen, params = self._in_scope("f", "e")
        joins = "" if not params else "JOIN hg_fact f ON f.id = a.fact JOIN hg_entity e ON e.id = a.entity "
        # The facts' edges first, by the primary key, then the scope checks on those few rows:
        # left to plan it, the database estimated 3 entities in a scope that had 592 and
        # searched the edges once per entity (174 ms for 40 facts at 100k facts).
        return self._rows(
            "WITH a AS MATERIALIZED (SELECT fact, entity, role, seq FROM hg_about WHERE fact = ANY(%s)) "
            f"SELECT a.fact, a.entity, a.role FROM a {joins}WHERE {seen} ORDER BY a.fact, a.seq",
            (list(set(fact_ids)), *params),
        )

    def facts_about(self, entity_id: str, *, limit: int, statuses: Sequence[str]) -> list[str]:
        """The ``limit`` most recently created facts about the entity with one of ``statuses``."""
        return self.facts_about_many([entity_id], limit=limit, statuses=statuses)[entity_id]

    def facts_about_many(
        self, entity_ids: Sequence[str], *, limit: int, statuses: Sequence[str]
    ) -> dict[str, list[str]]:
        """``facts_about`` of each entity, in one query for all (a walk asks for ~15 a hop: at
        100k facts each was a round trip)."""
        found: dict[str, list[str]] = {eid: [] for eid in entity_ids}
        seen, params = self._in_scope("f")
        entity_seen, entity_params = self._in_scope("e")  # the entity seen, in the same query
        # Each entity along the index on (entity, created_at DESC, fact DESC), so the database
        # stops after the rows asked for: a GROUP BY read every ABOUT edge of the entity, a hub's
        # too. A fact about the entity in two roles has two rows; its first is its newest.
        query = (
            "SELECT g.eid, x.fact FROM unnest(%s::text[]) WITH ORDINALITY AS g(eid, ord) CROSS JOIN LATERAL "
            "(SELECT a.fact, a.created_at FROM hg_about a JOIN hg_fact f ON f.id = a.fact "
            f"WHERE a.entity = g.eid AND f.status = ANY(%s) AND {seen} "
            f"AND EXISTS (SELECT 1 FROM hg_entity e WHERE e.id = g.eid AND {entity_seen}) "
            "ORDER BY a.created_at DESC, a.fact DESC LIMIT %s) x "
            "ORDER BY g.ord, x.created_at DESC, x.fact DESC"
        )
        asking, fetch = list(found) if limit > 0 else [], 2 * limit
        while asking:
            read: dict[str, list[str]] = {eid: [] for eid in asking}
            for eid, fid in self._rows(query, (asking, list(statuses), *params, *entity_params, fetch)):
                read[str(eid)].append(str(fid))
            for eid, fids in read.items():
                found[eid] = list(dict.fromkeys(fids))[:limit]
            # Those whose rows were all fact ids read twice may have more further on.
            asking = [eid for eid, fids in read.items() if len(found[eid]) < limit and len(fids) == fetch]
            fetch *= 4
        return found

    def entity_relations(self, entity_ids: Sequence[str]) -> list[EdgeRow]:
        """The seen RELATES edges touching ``entity_ids``: each entity's in the order made."""
        rows = self._edges_touching(
            "hg_relates",
            "hg_entity",
            "e.src, e.dst, e.predicate, e.weight, e.fact_id, e.created_at",
            entity_ids,
        )
        order = dict.fromkeys(r[0] for eid in entity_ids for r in rows if eid in (r[1], r[2]))
        edges = {r[0]: r for r in rows}
        return [
            EdgeRow(EdgeType.RELATES, edges[s][1], edges[s][2], _relates_props(*edges[s][3:])) for s in order
        ]

    def related_entities(self, entity_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, float]]:
        """(entity, related entity, strongest RELATES weight): the ``limit`` strongest per entity,
        the entities in the order asked (one query for all: a hop asks for tens), each read in
        the order of ``hg_neighbour``'s index until ``limit`` seen here are found."""
        seen, params = self._in_scope("o")
        joins = "" if not params else "JOIN hg_entity o ON o.id = n.b "
        query = (
            "SELECT g.eid, r.b, r.w FROM unnest(%s::text[]) WITH ORDINALITY AS g(eid, ord) "
            f"CROSS JOIN LATERAL (SELECT n.b, n.w FROM hg_neighbour n {joins}WHERE n.a = g.eid AND {seen} "
            "ORDER BY n.w DESC, n.b DESC LIMIT %s) r ORDER BY g.ord, r.w DESC, r.b DESC"
        )
        asked = list(dict.fromkeys(entity_ids))
        seen_ids = self._seen(asked)
        wanted = [e for e in asked if e in seen_ids]
        if not wanted or limit <= 0:
            return []
        rows = self._rows(query, (wanted, *params, limit))
        return [(str(eid), str(other), float(w)) for eid, other, w in rows]

    def tag_neighbours(self, fact_ids: Sequence[str], *, limit: int) -> list[EdgeRow]:
        """Facts sharing a tag with ``fact_ids``, newest tagged first, ``limit`` rows in all (a tag
        is a name for every scope: only the facts seen here share it). Read as far as needed: the
        asked facts' tags in their order, then the tags' newest facts a few tags at a time (one,
        then as many more as read so far) until ``limit`` rows are found: the first tag of a busy
        memory fills them (reading every tag's facts first checked ~3,000 facts' scopes a search)."""
        seen_ids = self._seen(fact_ids)
        asked = [fid for fid in dict.fromkeys(fact_ids) if fid in seen_ids]
        if not asked or limit <= 0:
            return []
        # Three plain reads, not one join: with no statistics on scope or tag (the schema keeps
        # text columns out of them), the database guessed 472 facts in a scope of 94,408 and
        # walked them all for each tag (~0.6 s a tag at 100k facts). The asked facts' tags by
        # their key; each tag's newest facts along hg_tag_tag_seq; then which of those are seen.
        tags = self._rows("SELECT fact, seq, tag FROM hg_tag WHERE fact = ANY(%s)", (asked,))
        order = {fid: n for n, fid in enumerate(asked)}
        tags.sort(key=lambda row: (order[row[0]], row[1]))
        wanted = list(dict.fromkeys(str(tag) for _, _, tag in tags))
        newest: dict[str, list[str]] = {}
        edges: list[EdgeRow] = []
        for fid, _, tag in tags:
            if tag not in newest:  # the first tag not read yet: it and the next ones
                newest.update(self._newest_tagged(wanted[len(newest) : 2 * len(newest) + 1], limit + 1))
            others = [other for other in newest[tag] if other != fid][: limit - len(edges)]
            edges += [EdgeRow(EdgeType.HAS_TAG, str(fid), other, {"tag": tag}) for other in others]
            if len(edges) >= limit:
                break
        return edges

    def _newest_tagged(self, tags: Sequence[str], wanted: int) -> dict[str, list[str]]:
        """Each of ``tags``' ``wanted`` newest facts seen here (all of them, if it has fewer)."""
        found: dict[str, list[str]] = {}
        fetch = wanted
        while tags:
            read: dict[str, list[str]] = {tag: [] for tag in tags}
            for tag, fid in self._rows(
                "SELECT g.tag, t.fact FROM unnest(%s::text[]) AS g(tag) CROSS JOIN LATERAL (SELECT fact, "
                "seq FROM hg_tag WHERE tag = g.tag ORDER BY seq DESC LIMIT %s) t ORDER BY g.tag, t.seq DESC",
                (sorted(tags), fetch),
            ):
                read[str(tag)].append(str(fid))
            seen_here = self._seen({fid for fids in read.values() for fid in fids})
            short = []  # tags with too few seen facts and more further on
            for tag, fids in read.items():
                kept = [fid for fid in fids if fid in seen_here]
                if len(kept) < wanted and len(fids) == fetch:
                    short.append(tag)
                else:
                    found[tag] = kept[:wanted]
            tags, fetch = short, fetch * 4
        return found

    def linked(self, edge_type: str, statuses: Sequence[str], *, limit: int) -> list[tuple[str, str]]:
        """(source, target) of the newest ``limit`` fact-to-fact edges of ``edge_type`` whose two
        facts are seen here and have one of ``statuses``."""
        seen, params = self._in_scope("a", "b")
        rows = self._rows(
            "SELECT l.src, l.dst FROM hg_link l "
            "JOIN hg_fact a ON a.id = l.src JOIN hg_fact b ON b.id = l.dst "
            f"WHERE l.type = %s AND a.status = ANY(%s) AND b.status = ANY(%s) AND {seen} "
            "ORDER BY l.seq DESC LIMIT %s",
            (edge_type, list(statuses), list(statuses), *params, limit),
        )
        return [(str(src), str(dst)) for src, dst in rows]

    def oldest(self, statuses: Sequence[str], *, limit: int) -> list[str]:
        """The ``limit`` oldest facts seen here with one of ``statuses``."""
        seen, params = self._in_scope("f")
        rows = self._rows(
            f"SELECT f.id FROM hg_fact f WHERE f.status = ANY(%s) AND {seen} "
            "ORDER BY f.created_at, f.id LIMIT %s",
            (list(statuses), *params, limit),
        )
        return [str(fid) for (fid,) in rows]

    def tagged(self, prefix: str, statuses: Sequence[str]) -> list[tuple[str, str]]:
        """(fact id, tag) of the facts seen here, of ``statuses``, with a tag that starts with
        ``prefix``, oldest tagged first."""
        # The tags first, then their facts by id: joined, the planner once guessed a scope holds
        # a few facts and read every fact for none tagged (120 ms at 100k facts). Most stores
        # have no trigger tag at all: one index range, and nothing more.
        past = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first string after every one it starts
        tagged = self._rows(
            'SELECT fact, tag FROM hg_tag WHERE tag COLLATE "C" >= %s AND tag COLLATE "C" < %s ORDER BY seq',
            (prefix, past),
        )
        if not tagged:
            return []
        status = self.statuses(fid for fid, _ in tagged)
        return [(str(fid), str(tag)) for fid, tag in tagged if status.get(fid) in statuses]

    def entity_names_for(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        seen, params = self._in_scope("f", "e")
        rows = self._rows(
            "SELECT a.fact, e.name FROM hg_about a JOIN hg_fact f ON f.id = a.fact "
            "JOIN hg_entity e ON e.id = a.entity "
            f"WHERE a.fact = ANY(%s) AND {seen} ORDER BY a.fact, a.seq",
            (list(set(fact_ids)), *params),
        )
        by_fact: dict[str, list[str]] = {}
        for fid, name in rows:
            by_fact.setdefault(fid, []).append(name)
        return {fid: by_fact[fid] for fid in dict.fromkeys(fact_ids) if fid in by_fact}

    def entity_names(self, prefix: str, *, limit: int) -> list[str]:
        """Names of the seen entities starting with ``prefix`` (any case), sorted, at most ``limit``."""
        folded = prefix.casefold()
        seen, params = self._in_scope("e")
        rows = self._rows(
            f"SELECT DISTINCT name FROM hg_entity e WHERE starts_with(lower(name), lower(%s)) AND {seen}",
            (prefix, *params),
        )
        names = (str(name) for (name,) in rows if str(name).casefold().startswith(folded))
        return sorted(names, key=str.casefold)[:limit]

    def scopes(self, prefix: str, *, limit: int) -> list[str]:
        """The seen scopes that hold a fact or entity and start with ``prefix``, sorted, at most ``limit``."""
        found = {str(s) for (s,) in self._rows(distinct_scopes("hg_fact", "hg_entity"), ())}
        seen = found if self._scopes is None else found & set(self._scopes)
        folded = prefix.casefold()
        return sorted(s for s in seen if s.casefold().startswith(folded))[:limit]


def _link_props(at: datetime | None, props: Any) -> dict[str, Any]:
    """A fact link's properties as the graph's reads list them: its time first, then the rest."""
    found: dict[str, Any] = {} if at is None else {"created_at": at}
    found.update(props if isinstance(props, dict) else json.loads(props or "{}"))
    return found


def _relates_props(
    predicate: str | None, weight: float | None, fact_id: str | None, at: datetime | None
) -> dict[str, Any]:
    """A RELATES edge's properties from its columns, in the graph's order, nulls left out."""
    values = (("predicate", predicate), ("weight", weight), ("fact_id", fact_id), ("created_at", at))
    return {k: v for k, v in values if v is not None}
