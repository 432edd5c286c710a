"""The graph's writes and the reads that need Kùzu; each write reaches the graph index once it commits.

The embedded graph (Kùzu's fork ladybug) holds facts, entities, typed edges and lifecycle state.
The domain's Cypher is here; the session's plumbing is in kuzu_session.py, the schema's in
migrations.py, rows become ``Fact``/``Entity`` values in rows.py. Reads of the graph's shape
(walks, edges, claims, session tails) are not here: callers ask ``graph.view(scopes)`` (the
graph index as a caller in those scopes sees it), which this store keeps current (graph_index.py).
"""

from __future__ import annotations

import logging
import tempfile
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from hippograph.domain.errors import InternalError, StoreError
from hippograph.domain.models import ACTIVE_STATUSES, EDGE_PROPS, FACT_EDGES, EdgeType, Entity, Fact
from hippograph.store import engine_upgrade, migrations
from hippograph.store.cache_budget import DEFAULT_SHARES, CacheBudget
from hippograph.store.census import GraphCensus
from hippograph.store.entity_index import EntityIndex, IndexedEntities
from hippograph.store.fact_cache import FactCache
from hippograph.store.graph_erase import erase
from hippograph.store.graph_index import GraphIndex
from hippograph.store.graph_values import ClaimKey, SessionKey, claim_key
from hippograph.store.index_build import RELATES_PROPS, build_index, open_index
from hippograph.store.index_view import EVERYWHERE, IndexView
from hippograph.store.kuzu_columns import ColumnTypes
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.listing import FactListing
from hippograph.store.receipts import Receipts
from hippograph.store.rows import (
    ENTITY_COLUMNS,
    FACT_COLUMNS,
    changed_states,
    entity_from_row,
    entity_params,
    fact_from_row,
    fact_params,
    to_db_time,
)
from hippograph.store.seam import COMPACT_BYTES, COMPACT_FACTS, FactLink, Relation

__all__ = ["KuzuGraphStore"]

log = logging.getLogger(__name__)

# Meta: the token the graph index file held at the graph's last clean close (graph_index.py).
_INDEX_TOKEN = "graph_index_token"


# Reads of facts and entities; ``{}``: the columns they return (``_items``). One primary-key
# lookup per id (UNWIND) beats a filtered scan (IN, ~70 ms at 100k); named columns read ~3x
# faster than whole nodes.
_FACTS_BY_ID = "UNWIND $ids AS x MATCH (f:Fact {{id: x}}) RETURN {}"
_ALL_FACTS = "MATCH (f:Fact) RETURN {} ORDER BY f.created_at"
_ACTIVE_FACTS = "MATCH (f:Fact) WHERE f.status IN $active RETURN {}"
_ENTITIES_BY_ID = "MATCH (e:Entity) WHERE e.id IN $ids RETURN {}"
_ALL_ENTITIES = "MATCH (e:Entity) RETURN {}"
_AN_ENTITY = [("e:Entity", "id", "id")]  # for_each's end: the entity a row's id names


def _fact_edge(edge: str) -> EdgeType:
    """``edge`` as a fact-to-fact edge table: its name goes into Cypher, so it must be one."""
    if edge not in FACT_EDGES:
        raise InternalError(f"unknown fact edge {edge!r}")
    return EdgeType(edge)


class KuzuGraphStore:
    """One Kùzu graph (a single file) opened read-write by this process, and its read model."""

    written_elsewhere = False  # one process owns an embedded graph
    purge_leaves = None  # a purge rewrites the graph file and the vector tables (finish_purge)

    def __init__(self, path: Path, *, max_db_size: int, cache: CacheBudget = DEFAULT_SHARES) -> None:
        self.file = path
        pool = cache.graph_pages
        engine_upgrade.upgrade(path, max_db_size=max_db_size, buffer_pool_bytes=pool)
        migrations.refuse_newer(path)
        self._read = GraphIndex.beside(path, cache_bytes=cache.graph_index)
        # Writes reach the index when they commit (all of one commit at once).
        self._session = KuzuSession(
            path,
            max_db_size=max_db_size,
            buffer_pool_bytes=pool,
            publish=self._read.publish,
            before_commit=self._read.trust.mark_pending,
        )
        try:
            migrations.migrate(self._session)
        except BaseException:
            self._session.close()
            raise
        self._fact_items, self._entity_items = _items(self._session.types)
        self.receipts = Receipts(self._session)
        self.listing = FactListing(self._session)
        self.census = GraphCensus(self._session)
        token = self.get_meta(_INDEX_TOKEN)
        if not token:  # a graph that never closed cleanly has none yet
            token = uuid.uuid4().hex
            self.set_meta(_INDEX_TOKEN, token)
        open_index(self._session, self._read, token)
        self._facts = FactCache(cache.facts)
        self._names = IndexedEntities(self._read.names)

    @property
    def names(self) -> EntityIndex:
        """Every entity by name and alias, current as of the last commit (kept by the writes here)."""
        return self._names

    @property
    def read(self) -> GraphIndex:
        """The graph's shape (the index file), thread-safe and current as of the last commit."""
        return self._read

    def view(self, scopes: Collection[str] | None) -> IndexView:
        """The graph's shape as a caller who sees ``scopes`` sees it (``EVERYWHERE``: all of it)."""
        return IndexView(self._read, scopes)

    def fact_count(self) -> int:
        """How many facts the graph holds, any status."""
        return self._read.fact_count()

    def fact_statuses(self) -> dict[str, str]:
        """Every fact's id and status."""
        return self._read.fact_statuses()

    def last_facts_in_sessions(self, sessions: Iterable[SessionKey]) -> dict[SessionKey, str]:
        """The id of each session's latest fact (sessions with none are left out)."""
        return self._read.last_facts_in_sessions(sessions)

    def close(self) -> None:
        """Close the graph and its index, the index marked as matching the graph (see graph_index)."""
        token = uuid.uuid4().hex
        try:
            if self._read.stale:
                raise StoreError("a commit's changes did not reach the graph index")
            self._read.set_token(token)
            self._read.close()
            self.set_meta(_INDEX_TOKEN, token)
        except Exception:  # the next open builds the index again
            log.exception("could not mark the graph index as current; the next open rebuilds it")
            self._read.close()
        self._session.close()

    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all (and reach the read model only then)."""
        return self._session.transaction()

    def check_mirror(self, *, repair: bool) -> list[str]:
        """Compare the graph index (with one built afresh beside it), the fact cache and the
        entity index with the stored graph; ``repair`` makes them agree."""
        with self._session.lock:
            with tempfile.TemporaryDirectory(dir=self.file.parent) as scratch:
                copy = Path(scratch) / "stored.index"
                stored = GraphIndex(copy)
                build_index(self._session, stored)
                stored.close()
                problems = self._read.differences(copy, repair=repair)
            stale = self._facts.drop_stale({fact.id: fact for fact in self.all_facts()}, repair=repair)
            if stale:
                problems.append(f"fact cache: {stale} stale")
        return problems

    # ------------------------------------------------------------ meta

    def schema_version(self) -> int:
        return migrations.schema_version(self._session)

    def get_meta(self, key: str) -> str | None:
        return migrations.get_meta(self._session, key)

    def set_meta(self, key: str, value: str) -> None:
        migrations.set_meta(self._session, key, value)

    # ------------------------------------------------------------ facts

    def insert_facts(self, facts: Sequence[Fact]) -> None:
        """Create new facts, all in one statement."""
        if not facts:
            return
        facts = list(facts)
        rows = [fact_params(fact) for fact in facts]
        self._session.run(*self._session.types.creating("Fact", FACT_COLUMNS, rows))

        def apply() -> None:
            for fact, row in zip(facts, rows, strict=True):
                claim = claim_key(fact.subject, fact.predicate, fact.scope)
                self._read.add_fact(
                    fact.id, fact.scope, fact.status.value, row["created_at"], claim, fact.session_id
                )
            self._facts.put(facts)

        self._session.after_commit(apply)

    def update_fact_state(self, fact: Fact) -> None:
        self.update_fact_states([fact])

    def update_fact_states(self, facts: Sequence[Fact]) -> None:
        """Write back the lifecycle fields the cached committed versions lack (``changed_states``)."""
        if not facts:
            return
        facts = list(facts)
        # Out of the cache until committed: a second SET first, or a failed publish, writes all.
        held = self._facts.take(f.id for f in facts)
        for columns, rows in changed_states(facts, held).items():
            sets = ", ".join(f"f.{c} = v_{c}" for c in columns)
            self._session.for_each(rows, [("f:Fact", "id", "id")], "Fact", columns, f"SET {sets}")

        def apply() -> None:
            for fact in facts:
                self._read.set_status(fact.id, fact.status.value)
            self._facts.put(facts)

        self._session.after_commit(apply)

    def purge_facts(self, tombstones: Sequence[Fact], tags: Sequence[str]) -> set[str]:
        """Erase the text of facts ``lc.purge`` made tombstones (see ``graph_erase``); drop the tags among
        ``tags`` no fact carries any more. Returns the entities the facts were about."""
        return erase(self._session, self._read, self._facts, tombstones, tags)

    def rebuild(self) -> None:
        """Rewrite the graph file from its contents (``KuzuSession.rebuild``); keep its new size
        and how many facts it holds."""
        self._session.rebuild()
        self._read.checkpoint()  # a purge ends here: the index's log held the erased rows
        self.set_meta(COMPACT_BYTES, str(self.file.stat().st_size))
        self.set_meta(COMPACT_FACTS, str(self.fact_count()))

    def writer(self) -> AbstractContextManager[None]:
        """Nothing beyond the service's write lock: one process owns an embedded graph."""
        return nullcontext()

    def checkpoint(self) -> None:
        self._session.checkpoint()

    def get_facts(self, ids: Sequence[str], *, keep: bool = True) -> dict[str, Fact]:
        if not ids:
            return {}
        with self._session.lock:
            # Inside a transaction (this thread's), its uncommitted writes are only in Kùzu.
            committed = not self._session.in_transaction
            found = self._facts.get(ids) if committed else {}
            misses = [fid for fid in dict.fromkeys(ids) if fid not in found]
            if misses:
                rows = self._session.run(_FACTS_BY_ID.format(self._fact_items), {"ids": misses})
                read = [fact_from_row(row) for row in rows]
                found.update((fact.id, fact) for fact in read)
                if committed and keep:
                    self._facts.put(read)
        return found

    def get_fact(self, fact_id: str) -> Fact | None:
        return self.get_facts([fact_id]).get(fact_id)

    def all_facts(self) -> Iterator[Fact]:
        yield from map(fact_from_row, self._session.run(_ALL_FACTS.format(self._fact_items)))

    def active_facts(self) -> Iterator[Fact]:
        active = {"active": list(ACTIVE_STATUSES)}
        yield from map(fact_from_row, self._session.run(_ACTIVE_FACTS.format(self._fact_items), active))

    def fact_ids(self) -> set[str]:
        return {row["id"] for row in self._session.run("MATCH (f:Fact) RETURN f.id AS id")}

    def active_facts_with(self, keys: Iterable[ClaimKey]) -> dict[ClaimKey, list[Fact]]:
        """The active facts of each key (a ``claim_key``), from the read model and the fact cache."""
        ids = self._read.active_claims(keys)
        facts = self.get_facts([fid for found in ids.values() for fid in found])
        return {key: [facts[fid] for fid in found if fid in facts] for key, found in ids.items()}

    def tag_fact(self, fact_id: str, tags: Iterable[str]) -> None:
        self.tag_facts([(fact_id, tag) for tag in tags])

    def tag_facts(self, tags: Sequence[tuple[str, str]]) -> None:
        """HAS_TAG edges from (fact id, tag) pairs the store does not hold yet; tags are created as needed."""
        if not tags:
            return
        pairs = list(dict.fromkeys(tags))  # one edge per pair, however often it is asked for
        names = sorted({t for _, t in pairs})
        self._session.run("UNWIND $names AS name MERGE (:Tag {name: name})", {"names": names})
        rows = [{"fact": fid, "tag": tag} for fid, tag in pairs]
        ends = [("f:Fact", "id", "fact"), ("t:Tag", "name", "tag")]
        self._session.for_each(rows, ends, EdgeType.HAS_TAG, (), "CREATE (f)-[:HAS_TAG]->(t)")

        def apply() -> None:
            for fid, tag in pairs:
                self._read.tag(fid, [tag])

        self._session.after_commit(apply)

    def link_facts(self, edge: str, src: str, dst: str, now: datetime, **props: Any) -> None:
        self.link_facts_many(edge, [(src, dst, now, props)])

    def link_facts_many(self, edge: str, links: Sequence[FactLink]) -> None:
        """``edge`` edges from (source id, target id, time, properties) rows."""
        table = _fact_edge(edge)
        if not links:
            return
        names = ("created_at", *EDGE_PROPS[table])
        rows: list[dict[str, Any]] = [
            {"src": src, "dst": dst, "created_at": to_db_time(now), **{n: props.get(n) for n in names[1:]}}
            for src, dst, now, props in links
        ]
        fields = ", ".join(f"{n}: v_{n}" for n in names)
        ends = [("a:Fact", "id", "src"), ("b:Fact", "id", "dst")]
        self._session.for_each(rows, ends, table, names, f"CREATE (a)-[:{table} {{{fields}}}]->(b)")

        def apply() -> None:
            for row in rows:
                stored = {n: row[n] for n in names if row[n] is not None}
                self._read.link_facts(table, row["src"], row["dst"], stored)

        self._session.after_commit(apply)

    def reweigh_relations(self, relation: str, weights: Sequence[tuple[str, str, float]]) -> None:
        """Set the weight of the RELATES_TO edges of ``relation``: (source id, target id, weight)."""
        for src, dst, weight in weights:
            self._session.run(
                "MATCH (a:Fact {id: $src})-[r:RELATES_TO]->(b:Fact {id: $dst}) "
                "WHERE r.relation = $relation SET r.weight = $weight",
                {"src": src, "dst": dst, "relation": relation, "weight": weight},
            )

        def apply() -> None:
            for src, dst, weight in weights:
                self._read.reweigh(src, dst, relation, weight)

        self._session.after_commit(apply)

    def has_edge(self, edge: str, src: str, dst: str) -> bool:
        rows = self._session.run(
            f"MATCH (a:Fact {{id: $src}})-[:{_fact_edge(edge)}]->(b:Fact {{id: $dst}}) RETURN count(*) AS n",
            {"src": src, "dst": dst},
        )
        return bool(rows[0]["n"])

    def chain(self, fact_id: str, edge: str, *, newer: bool, max_depth: int = 30) -> list[tuple[str, int]]:
        """Facts reachable along ``edge`` from ``fact_id`` (or into it when ``newer``), with hop counts."""
        table = _fact_edge(edge)
        pattern = f"<-[:{table}*1..{int(max_depth)}]-" if newer else f"-[:{table}*1..{int(max_depth)}]->"
        rows = self._session.run(
            f"MATCH p = (a:Fact {{id: $id}}){pattern}(b:Fact) RETURN b.id AS id, min(length(p)) AS hops "
            "ORDER BY hops",
            {"id": fact_id},
        )
        return [(r["id"], int(r["hops"])) for r in rows]

    # ------------------------------------------------------------ entities

    def insert_entities(self, entities: Sequence[Entity]) -> None:
        """Create new entities, all in one statement."""
        if not entities:
            return
        entities = list(entities)
        rows = [entity_params(e) for e in entities]
        self._session.run(*self._session.types.creating("Entity", ENTITY_COLUMNS, rows))

        def apply() -> None:
            for entity in entities:
                self._read.add_entity(entity)

        self._session.after_commit(apply)

    def touch_entities(self, mentions: Mapping[str, tuple[int, datetime]]) -> None:
        """Count new mentions: entity id -> (how many, when the last one was)."""
        if not mentions:
            return
        self._session.for_each(
            [
                {"id": eid, "mention_count": n, "last_mentioned": to_db_time(at)}
                for eid, (n, at) in mentions.items()
            ],
            _AN_ENTITY,
            "Entity",
            ("mention_count", "last_mentioned"),
            "SET e.mention_count = e.mention_count + v_mention_count, e.last_mentioned = v_last_mentioned",
        )
        self._session.after_commit(lambda: self._read.count_mentions(mentions))

    def retype_entities(self, types: Mapping[str, str]) -> None:
        """Give known entities the type a later sentence gave them: entity id -> type."""
        if types:
            rows = [{"id": eid, "type": kind} for eid, kind in types.items()]
            self._session.for_each(rows, _AN_ENTITY, "Entity", ("type",), "SET e.type = v_type")
            self._session.after_commit(lambda: self._read.retype_entities(types))

    def entities(self, entity_ids: Sequence[str]) -> dict[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._session.run(_ENTITIES_BY_ID.format(self._entity_items), {"ids": list(entity_ids)})
        return {r["id"]: entity_from_row(r) for r in rows}

    def all_entities(self) -> list[Entity]:
        return [entity_from_row(r) for r in self._session.run(_ALL_ENTITIES.format(self._entity_items))]

    def link_about(self, fact_id: str, entity_id: str, role: str) -> None:
        """An ABOUT edge, unless the fact has this one already (asked of the read model: a Kùzu
        match of the edge scanned a busy entity's edges, ~90 ms at 100k)."""
        with self._session.lock:
            if not self._read.has_about(fact_id, entity_id, role):
                self.link_about_many([(fact_id, entity_id, role)])

    def link_about_many(self, links: Sequence[tuple[str, str, str]]) -> None:
        """ABOUT edges from (fact id, entity id, role) rows the store does not hold yet.

        CREATE, not MERGE: kuzu 0.11.3 cannot MERGE on nodes found through the variables
        for_each binds ("Cannot evaluate expression with type VARIABLE"), and a MERGE would
        scan a hub entity's edges. Callers write edges of new facts, or drop those stored.
        """
        if not links:
            return
        links = list(dict.fromkeys(links))  # one edge per row, however often it is asked for
        self._session.for_each(
            [{"fact": fid, "entity": eid, "role": role} for fid, eid, role in links],
            [("f:Fact", "id", "fact"), ("e:Entity", "id", "entity")],
            EdgeType.ABOUT,
            ("role",),
            "CREATE (f)-[:ABOUT {role: v_role}]->(e)",
        )

        def apply() -> None:
            for fid, eid, role in links:
                self._read.link_about(fid, eid, role)

        self._session.after_commit(apply)

    def link_entities(
        self, src: str, dst: str, predicate: str, weight: float, fact_id: str | None, now: datetime
    ) -> None:
        self.link_entities_many([Relation(src, dst, predicate, weight, fact_id, now)])

    def link_entities_many(self, relations: Sequence[Relation]) -> None:
        """RELATES edges between entities (rows of their own: schema v7), in one transaction."""
        if not relations:
            return
        rows: list[dict[str, Any]] = [
            {"id": uuid.uuid4().hex, "src": rel.src, "dst": rel.dst, "predicate": rel.predicate}
            | {"weight": float(rel.weight), "fact_id": rel.fact_id, "created_at": to_db_time(rel.at)}
            for rel in relations
        ]
        # A row of its own (schema v7), written once both entities are found.
        columns = ("id", *RELATES_PROPS)
        fields = ", ".join(f"{n}: v_{n}" for n in columns)
        ends = [("a:Entity", "id", "src"), ("b:Entity", "id", "dst")]
        create = f"CREATE (:Relation {{src: a.id, dst: b.id, {fields}}})"
        self._session.for_each(rows, ends, "Relation", columns, create)

        def apply() -> None:
            for row in rows:
                stored = {n: row[n] for n in RELATES_PROPS if row[n] is not None}
                self._read.link_entities(row["src"], row["dst"], stored)

        self._session.after_commit(apply)

    def orphan_entities(self, gone: Collection[str] = ()) -> list[str]:
        """Entities no fact is about and no relation touches, once the facts ``gone`` are purged
        (asked of the index: the graph keeps ABOUT edges on the fact's side only, schema v6)."""
        return IndexView(self._read, EVERYWHERE).unlinked_entities(gone)

    def delete_entities(self, entity_ids: Sequence[str]) -> None:
        if entity_ids:
            ids = list(entity_ids)
            relations = "MATCH (r:Relation) WHERE r.src IN $ids OR r.dst IN $ids DELETE r"
            self._session.run(relations, {"ids": ids})
            self._session.run("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", {"ids": ids})
            self._session.after_commit(lambda: self._read.delete_entities(ids))


def _items(types: ColumnTypes) -> tuple[str, str]:
    """What a read of facts, and of entities, returns: every column, times as text (see
    store/kuzu_columns.py)."""
    return types.returning("f", "Fact", FACT_COLUMNS), types.returning("e", "Entity", ENTITY_COLUMNS)
