"""The graph's shape as one caller sees it: the scope rule, applied to every read of the graph index.

A caller in a scope sees the facts and entities of that scope and of ``global``
(``domain.visibility.visible_scopes``), nothing else: no id, edge or path of another scope.
``KuzuGraphStore.view(scopes)`` hands out a view; each of its reads drops every fact and entity
outside ``scopes`` (and every edge with such an end) before anything is counted or cut to a
limit, so a walk, a neighbour share or a tag lookup neither returns nor passes through another
scope. ``view(EVERYWHERE)`` is the owner's own look (writes, purge, upkeep, import).

Each read is a few indexed queries of the ``GraphIndex`` (any number of ids in one parameter),
under its lock; the view holds nothing of its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Final, Self

from hippograph.domain.errors import InternalError
from hippograph.domain.models import FACT_EDGES, EdgeType
from hippograph.store.graph_index import GraphIndex
from hippograph.store.graph_values import IN_IDS as _IN
from hippograph.store.graph_values import (
    EdgeRow,
    centred_on,
    distinct_scopes,
    edges_in_fact_order,
    ids_param,
    join_props,
    relates_props,
)

EVERYWHERE: Final = None  # ``KuzuGraphStore.view(EVERYWHERE)``: every scope (the owner's upkeep)


class AboutReads(ABC):
    """The ABOUT-edge reads every view answers alike from its ``_about`` rows."""

    _kept_about: dict[str, list[tuple[str, str, str]]] | None = None

    @abstractmethod
    def _about(self, fact_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """(fact, entity, role) of the seen facts' ABOUT edges to seen entities, in the order made."""

    def keeping_about(self) -> Self:
        """This view, keeping the ABOUT rows it reads for its later reads: for one search, which
        asks for the rows of the same facts up to three times (the walk, the entity channel, the
        favour of facts centred on a named entity) and writes nothing meanwhile."""
        self._kept_about = {}
        return self

    def _about_rows(self, fact_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """``_about``, from the rows kept where ``keeping_about`` asked for them (each fact's rows
        in the order made, the facts in the order asked)."""
        kept = self._kept_about
        if kept is None:
            return self._about(fact_ids)
        asked = list(dict.fromkeys(fact_ids))
        missing = [fid for fid in asked if fid not in kept]
        if missing:
            kept.update((fid, []) for fid in missing)
            for row in self._about(missing):
                kept[row[0]].append(row)
        return [row for fid in asked for row in kept[fid]]

    def about_edges(self, fact_ids: Sequence[str]) -> list[EdgeRow]:
        by_fact: dict[str, list[EdgeRow]] = {}
        for fid, eid, role in self._about_rows(fact_ids):
            by_fact.setdefault(fid, []).append(EdgeRow(EdgeType.ABOUT, fid, eid, {"role": role}))
        return [edge for fid in dict.fromkeys(fact_ids) for edge in by_fact.get(fid, ())]

    def about_any(self, fact_ids: Iterable[str], entity_ids: Iterable[str]) -> set[str]:
        """Those of ``fact_ids`` that are ABOUT any of ``entity_ids``."""
        wanted = set(entity_ids)
        return {fid for fid, eid, _ in self._about_rows(fact_ids) if eid in wanted}

    def centred_on_any(self, fact_ids: Iterable[str], entity_ids: Iterable[str]) -> set[str]:
        """Those of ``fact_ids`` whose topic is one of ``entity_ids`` (``graph_values.centred_on``)."""
        return centred_on(self._about_rows(fact_ids), entity_ids)


class IndexView(AboutReads):
    """Reads of the graph index, restricted to ``scopes`` (None: every scope)."""

    def __init__(self, index: GraphIndex, scopes: Collection[str] | None) -> None:
        self._x = index
        self._scopes = None if scopes is None else frozenset(scopes)
        self._scope_param = None if self._scopes is None else ids_param(sorted(self._scopes))

    def _sees_all(self) -> bool:
        """Whether this view sees every scope written: then there is nothing to filter out."""
        return self._scopes is None or self._x.scopes_written() <= self._scopes

    def _in_scope(self, *aliases: str) -> tuple[str, tuple[str, ...]]:
        """SQL that keeps the rows whose ``aliases`` (tables with a scope) are seen, and its
        parameters; nothing to keep out when the view sees every scope written. Call it holding
        the index's lock, with the query that uses it (a write may bring a new scope)."""
        if self._scope_param is None or self._sees_all():
            return "1", ()
        # `+`: never an index on scope for these (a scope may hold every row: without statistics
        # SQLite took fact_scope, made for scopes(), and read every fact for a tag range).
        return " AND ".join(f"+{a}.scope {_IN}" for a in aliases), (self._scope_param,) * len(aliases)

    def _rows(self, query: str, *params: Any) -> list[Any]:
        with self._x.lock:
            return self._x.db.execute(query, params).fetchall()

    def _seen(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` (facts or entities) whose scope this view sees (all of them, known
        or not, when it sees every scope written)."""
        wanted = set(ids)
        with self._x.lock:
            if self._scopes is None or self._sees_all() or not wanted:
                return wanted
            param = ids_param(wanted)
            rows = self._rows(
                f"SELECT id, scope FROM fact WHERE id {_IN} "
                f"UNION ALL SELECT id, scope FROM entity WHERE id {_IN}",
                param,
                param,
            )
        return {node for node, scope in rows if scope in self._scopes}

    def _edges_touching(
        self, table: str, ends: str, columns: str, ids: Iterable[str], where: str = "1", *where_params: str
    ) -> list[Any]:
        """(seq, ``columns``) of the edges of ``table`` with either end among ``ids`` and both
        ends (rows of ``ends``) seen, in the order they were made."""
        param = ids_param(set(ids))
        with self._x.lock:
            seen, params = self._in_scope("a", "b")
            joins = "" if not params else f"JOIN {ends} a ON a.id = e.src JOIN {ends} b ON b.id = e.dst "
            pick = (
                f"SELECT e.seq, {columns} FROM {table} e {joins}WHERE {where} AND {seen} AND e.{{end}} {_IN}"
            )
            args = (*where_params, *params, param)
            return self._rows(
                f"{pick.format(end='src')} UNION {pick.format(end='dst')} ORDER BY 1", *args, *args
            )

    def sees(self, node_id: str) -> bool:
        """The scope rule, the one place it is decided: a fact or entity is seen if its scope is."""
        return node_id in self._seen([node_id])

    def statuses(self, fact_ids: Iterable[str]) -> dict[str, str]:
        """The status of each of ``fact_ids`` that exists."""
        with self._x.lock:
            seen, params = self._in_scope("f")
            query = f"SELECT id, status FROM fact f WHERE id {_IN} AND {seen}"
            return dict(self._rows(query, ids_param(set(fact_ids)), *params))

    def fact_edges(self, fact_ids: Sequence[str], edge_types: Sequence[str] = FACT_EDGES) -> list[EdgeRow]:
        """Fact-to-fact edges touching ``fact_ids``, either direction, with weight where stored."""
        unknown = set(edge_types) - set(FACT_EDGES)
        if unknown:
            raise InternalError(f"unknown fact edges {sorted(unknown)}")
        types = ids_param(sorted(set(edge_types)))
        rows = self._edges_touching(
            "link", "fact", "e.type, e.src, e.dst, e.at, e.props", fact_ids, f"e.type {_IN}", types
        )
        # Each fact's edges out, then in, in the order they were made (as the mirror listed them).
        order = edges_in_fact_order(fact_ids, ((r[0], r[2], r[3]) for r in rows))
        edges = {r[0]: r for r in rows}
        return [
            EdgeRow(edges[seq][1], edges[seq][2], edges[seq][3], join_props(edges[seq][4], edges[seq][5]))
            for seq in order
        ]

    def _about(self, fact_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """(fact, entity, role) of the seen facts' ABOUT edges to seen entities, in the order made."""
        with self._x.lock:
            seen, params = self._in_scope("f", "e")
            joins = "" if not params else "JOIN fact f ON f.id = a.fact JOIN entity e ON e.id = a.entity "
            return self._rows(
                f"SELECT a.fact, a.entity, a.role FROM about a {joins}"
                f"WHERE a.fact {_IN} AND {seen} ORDER BY a.fact, a.pos",
                ids_param(set(fact_ids)),
                *params,
            )

    def facts_about(self, entity_id: str, *, limit: int, statuses: Sequence[str]) -> list[str]:
        """The ``limit`` most recently created facts about the entity with one of ``statuses``."""
        if limit <= 0 or not self.sees(entity_id):
            return []
        allowed, found = set(statuses), dict[str, None]()
        with self._x.lock:
            cursor = self._x.db.execute(
                "SELECT a.fact, f.status, f.scope FROM about a JOIN fact f ON f.id = a.fact "
                "WHERE a.entity = ? ORDER BY a.created DESC, a.fact DESC",
                (entity_id,),
            )
            for fid, status, scope in cursor:  # newest first, read only as far as needed
                if status in allowed and (self._scopes is None or scope in self._scopes):
                    found[fid] = None
                    if len(found) >= limit:
                        break
            cursor.close()
        return list(found)

    def facts_about_many(
        self, entity_ids: Sequence[str], *, limit: int, statuses: Sequence[str]
    ) -> dict[str, list[str]]:
        """``facts_about`` of each entity (in process: one read each costs no round trip)."""
        return {eid: self.facts_about(eid, limit=limit, statuses=statuses) for eid in entity_ids}

    def entity_relations(self, entity_ids: Sequence[str]) -> list[EdgeRow]:
        """The seen RELATES edges touching ``entity_ids``: each entity's in the order made."""
        rows = self._edges_touching(
            "relates", "entity", "e.src, e.dst, e.predicate, e.weight, e.fact_id, e.at", entity_ids
        )
        order = dict.fromkeys(r[0] for eid in entity_ids for r in rows if eid in (r[1], r[2]))
        edges = {r[0]: r for r in rows}
        return [
            EdgeRow(EdgeType.RELATES, edges[s][1], edges[s][2], relates_props(*edges[s][3:])) for s in order
        ]

    def related_entities(self, entity_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, float]]:
        """(entity, related entity, strongest RELATES weight): the ``limit`` strongest per entity."""
        out = []
        with self._x.lock:
            seen, params = self._in_scope("o")
            joins = "" if not params else "JOIN entity o ON o.id = n.b "
            query = (
                f"SELECT b, w FROM neighbour n {joins}WHERE n.a = ? AND {seen} "
                "ORDER BY w DESC, b DESC LIMIT ?"
            )
            asked = list(dict.fromkeys(entity_ids))
            seen_ids = self._seen(asked)
            for eid in (e for e in asked if e in seen_ids):
                out += [(eid, other, weight) for other, weight in self._rows(query, eid, *params, limit)]
        return out

    def tag_neighbours(self, fact_ids: Sequence[str], *, limit: int) -> list[EdgeRow]:
        """Facts sharing a tag with ``fact_ids``, newest tagged first, ``limit`` rows in all.

        A tag is a name, stored once for every scope: only the facts seen here share it.
        """
        rows: list[EdgeRow] = []
        seen = self._seen(fact_ids)
        with self._x.lock:
            db = self._x.db
            for fid in fact_ids:
                if fid not in seen:
                    continue
                tags = db.execute("SELECT tag FROM tag WHERE fact = ? ORDER BY seq", (fid,)).fetchall()
                for (tag,) in tags:
                    cursor = db.execute(
                        "SELECT t.fact, f.scope FROM tag t JOIN fact f ON f.id = t.fact "
                        "WHERE t.tag = ? ORDER BY t.seq DESC",
                        (tag,),
                    )
                    for other, scope in cursor:
                        if len(rows) >= limit:
                            cursor.close()
                            return rows
                        if other != fid and (self._scopes is None or scope in self._scopes):
                            rows.append(EdgeRow(EdgeType.HAS_TAG, fid, other, {"tag": tag}))
                    cursor.close()
        return rows

    def linked(self, edge_type: str, statuses: Sequence[str], *, limit: int) -> list[tuple[str, str]]:
        """(source, target) of the newest ``limit`` fact-to-fact edges of ``edge_type`` whose two
        facts are seen here and have one of ``statuses`` (a scan of the edge table)."""
        with self._x.lock:
            seen, params = self._in_scope("a", "b")
            rows = self._rows(
                "SELECT l.src, l.dst FROM link l JOIN fact a ON a.id = l.src JOIN fact b ON b.id = l.dst "
                f"WHERE l.type = ? AND a.status {_IN} AND b.status {_IN} AND {seen} "
                "ORDER BY l.seq DESC LIMIT ?",
                edge_type,
                ids_param(statuses),
                ids_param(statuses),
                *params,
                limit,
            )
        return [(str(src), str(dst)) for src, dst in rows]

    def oldest(self, statuses: Sequence[str], *, limit: int) -> list[str]:
        """The ``limit`` oldest facts seen here with one of ``statuses`` (a scan of the fact table)."""
        with self._x.lock:
            seen, params = self._in_scope("f")
            rows = self._rows(
                f"SELECT f.id FROM fact f WHERE f.status {_IN} AND {seen} ORDER BY f.created, f.id LIMIT ?",
                ids_param(statuses),
                *params,
                limit,
            )
        return [str(fid) for (fid,) in rows]

    def tagged(self, prefix: str, statuses: Sequence[str]) -> list[tuple[str, str]]:
        """(fact id, tag) of the facts seen here, of ``statuses``, with a tag that starts with
        ``prefix``, oldest tagged first (a range of the tag index: a few rows in any store)."""
        with self._x.lock:
            seen, params = self._in_scope("f")
            return self._rows(
                "SELECT t.fact, t.tag FROM tag t JOIN fact f ON f.id = t.fact "
                f"WHERE t.tag >= ? AND t.tag < ? AND f.status {_IN} AND {seen} ORDER BY t.seq",
                prefix,
                prefix[:-1] + chr(ord(prefix[-1]) + 1),  # the first text after every one with prefix
                ids_param(statuses),
                *params,
            )

    def entity_names_for(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        with self._x.lock:
            seen, params = self._in_scope("f", "e")
            rows = self._rows(
                "SELECT a.fact, e.name FROM about a JOIN fact f ON f.id = a.fact "
                f"JOIN entity e ON e.id = a.entity WHERE a.fact {_IN} AND {seen} "
                "ORDER BY a.fact, a.pos",
                ids_param(set(fact_ids)),
                *params,
            )
        by_fact: dict[str, list[str]] = {}
        for fid, name in rows:
            by_fact.setdefault(fid, []).append(name)
        return {fid: by_fact[fid] for fid in dict.fromkeys(fact_ids) if fid in by_fact}

    def entity_names(self, prefix: str, *, limit: int) -> list[str]:
        """Names of the seen entities starting with ``prefix`` (any case), sorted, at most ``limit``."""
        folded = prefix.casefold()
        with self._x.lock:
            seen, params = self._in_scope("e")
            rows = self._rows(
                f"SELECT DISTINCT name FROM entity e WHERE folded >= ? AND folded < ? AND {seen}",
                folded,
                folded + "\U0010ffff",
                *params,
            )
        return sorted((name for (name,) in rows), key=str.casefold)[:limit]

    def scopes(self, prefix: str, *, limit: int) -> list[str]:
        """The seen scopes that hold a fact or entity and start with ``prefix``, sorted, at most ``limit``."""
        found = {s for (s,) in self._rows(distinct_scopes("fact", "entity"))}
        seen = found if self._scopes is None else found & self._scopes
        folded = prefix.casefold()
        return sorted(s for s in seen if s.casefold().startswith(folded))[:limit]

    def unlinked_entities(self, gone: Iterable[str] = ()) -> list[str]:
        """The seen entities no fact is about and no relation touches, once the facts ``gone``
        (being purged in the open transaction) and the relations they stated are gone."""
        without = ids_param(set(gone))
        with self._x.lock:
            seen, params = self._in_scope("e")
            rows = self._rows(
                f"SELECT e.id FROM entity e WHERE NOT EXISTS (SELECT 1 FROM about a WHERE a.entity = e.id "
                f"AND a.fact NOT {_IN}) AND NOT EXISTS (SELECT 1 FROM relates r WHERE e.id IN (r.src, r.dst) "
                f"AND (r.fact_id IS NULL OR r.fact_id NOT {_IN})) AND {seen} ORDER BY e.id",
                without,
                without,
                *params,
            )
        return [str(eid) for (eid,) in rows]

    def tags_only_on(self, tags: Iterable[str], fact_ids: Iterable[str]) -> list[str]:
        """Those of ``tags`` that no fact but ``fact_ids`` carries, in any scope (a tag is no
        scope's: it goes when its last fact, seen here or not, is purged)."""
        rows = self._rows(
            f"SELECT n.value FROM json_each(?) n WHERE NOT EXISTS (SELECT 1 FROM tag t "
            f"WHERE t.tag = n.value AND t.fact NOT {_IN}) ORDER BY 1",
            ids_param(set(tags)),
            ids_param(set(fact_ids)),
        )
        return [str(tag) for (tag,) in rows]
