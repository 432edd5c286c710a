"""The graph in the memory's PostgreSQL database, first part: facts, entities, the graph's meta
and transactions (``hg_fact``, ``hg_entity``, ``hg_graph_meta``). Edges, the scoped reads
(``GraphView``), receipts, the census, the listing and the entity index come next (see
docs/postgres.md): until then this is not a whole ``GraphStore`` and nothing opens it.

Rows are the embedded graph's (``rows.fact_params`` / ``fact_from_row``: times as naive UTC),
plus each fact's claim key columns, so the conflict rule's lookup is one indexed query. There
is no cache and no mirror in the process: every read asks the database, so what another server
committed is what the next read sees.

A ``transaction()`` holds one connection for the calling thread; every method the thread calls
inside it runs in that transaction, and outside one, each call is a transaction of its own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from hippograph.domain.models import ACTIVE_STATUSES, Entity, Fact
from hippograph.store.entity_index import (
    EntityIndex,
    IndexedEntities,
    KeyedIds,
    first_word,
    name_keys,
    surname_of,
)
from hippograph.store.graph_values import ClaimKey, SessionKey, claim_key
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_edges import PgEdges
from hippograph.store.pg_records import PgCensus, PgListing, PgReceipts
from hippograph.store.pg_view import PgGraphView
from hippograph.store.rows import (
    ENTITY_COLUMNS,
    FACT_COLUMNS,
    FACT_STATE_COLUMNS,
    entity_from_row,
    entity_params,
    fact_from_row,
    fact_params,
    fact_state_params,
    to_db_time,
)

_ACTIVE = list(ACTIVE_STATUSES)
_WRITER_LOCK = 0x6867_5F77_7269_7465  # "hg_write": the memory's one writer, across servers
_COUNTED = 50_000  # facts counted exactly by fact_count; past it, the planner's estimate
_GRAPH_TABLES = (
    "hg_fact", "hg_entity", "hg_entity_key", "hg_entity_first", "hg_about", "hg_link", "hg_relates",
    "hg_neighbour", "hg_tag", "hg_receipt", "hg_reply",
)  # fmt: skip
_FACT_FIELDS = (*FACT_COLUMNS, "claim_subject", "claim_predicate")
_FACTS = f"SELECT {', '.join(FACT_COLUMNS)} FROM hg_fact"
_ENTITIES = f"SELECT {', '.join(ENTITY_COLUMNS)} FROM hg_entity"


# The embedded graph's schema version whose facts, entities and edges these tables hold (raised
# with it when the model changes; storage-only steps such as hg_fact.seq leave it). 6: the
# embedded graph's edge storage changed, not the model (7: relations as rows); raised with it.
_GRAPH_MODEL = 7


class PgGraphStore(PgEdges):
    """Facts, entities and their edges in the memory's database; every method is thread-safe.
    ``owns_database``: its pool is closed with it (the memory's other stores share it and
    close first)."""

    written_elsewhere = True  # by every server of the memory
    file = None  # the database's own files hold it
    purge_leaves = (
        "erased from every table of the PostgreSQL database; the server's write-ahead log keeps "
        "the text until its segments are reused, and replicas and backups keep their copies "
        "(docs/postgres.md, 'Erasing for good', says what an operator can do)"
    )

    def __init__(self, db: PgDatabase, *, owns_database: bool = False) -> None:
        super().__init__(db)
        self._owns = owns_database

    @property
    def database(self) -> PgDatabase:
        return self._db

    def close(self) -> None:
        if self._owns:
            self._db.close()

    @property
    def receipts(self) -> PgReceipts:
        return PgReceipts(self)

    @property
    def census(self) -> PgCensus:
        return PgCensus(self)

    @property
    def listing(self) -> PgListing:
        return PgListing(self)

    def writer(self) -> AbstractContextManager[None]:
        """Held around each write's planning and commit, by the service's write lock: one writer
        at a time on every server of the memory, so what a write read to plan it (the claim's
        active facts, the near duplicates) is still true when it commits."""
        return self._db.holding(_WRITER_LOCK)

    def checkpoint(self) -> None:
        """Nothing to do: the database checkpoints its own log."""

    def rebuild(self) -> None:
        """Rewrite the graph's tables without their dead row versions (after a purge, so no
        erased text is left in their files)."""
        self._db.vacuum_full(_GRAPH_TABLES)

    def check_mirror(self, *, repair: bool) -> list[str]:
        """Nothing to compare: no copy of the graph is held beside the database."""
        return []

    def purge_facts(self, tombstones: Sequence[Fact], tags: Sequence[str]) -> set[str]:
        """Erase the text of facts ``lc.purge`` made tombstones: every column set to the
        tombstone's, their ABOUT and tag edges and the RELATES edges they stated deleted; fact-to-
        fact edges stay (the chains). Returns the entities the facts were about. The old row
        versions stay in the table's files until ``rebuild``. (``tags``: a tag is no row of its
        own here, so none is left behind.)"""
        ids = [fact.id for fact in tombstones]
        if not ids:
            return set()
        sets = ", ".join(f"{c} = %s" for c in FACT_COLUMNS[1:])
        rows = [(*(fact_params(f)[c] for c in FACT_COLUMNS[1:]), None, None, f.id) for f in tombstones]
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(
                f"UPDATE hg_fact SET {sets}, claim_subject = %s, claim_predicate = %s WHERE id = %s", rows
            )
            entities = cur.execute(
                "DELETE FROM hg_about WHERE fact = ANY(%s) RETURNING entity", (ids,)
            ).fetchall()
            cur.execute("DELETE FROM hg_tag WHERE fact = ANY(%s)", (ids,))
            cur.execute("DELETE FROM hg_relates WHERE fact_id = ANY(%s)", (ids,))
        return {str(eid) for (eid,) in entities}

    def view(self, scopes: Collection[str] | None) -> PgGraphView:
        """Reads of the graph as a caller who sees ``scopes`` sees it (None: every scope)."""
        return PgGraphView(self, scopes)

    # ------------------------------------------------------------ meta

    def schema_version(self) -> int:
        """The version of the graph's model its tables hold (what an export says it carries),
        numbered as the embedded graph's schema; the tables' own steps are ``PgDatabase``'s."""
        return _GRAPH_MODEL

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM hg_graph_meta WHERE key = %s", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO hg_graph_meta VALUES (%s, %s) ON CONFLICT (key) "
                "DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # ------------------------------------------------------------ facts

    def insert_facts(self, facts: Sequence[Fact]) -> None:
        """Create new facts, in one statement."""
        if not facts:
            return
        rows = []
        for fact in facts:
            params = fact_params(fact)
            claim = claim_key(fact.subject, fact.predicate, fact.scope)
            rows.append((*(params[c] for c in FACT_COLUMNS), *(claim[:2] if claim else (None, None))))
        marks = ", ".join(["%s"] * len(_FACT_FIELDS))
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO hg_fact ({', '.join(_FACT_FIELDS)}) VALUES ({marks})", rows)

    def update_fact_state(self, fact: Fact) -> None:
        self.update_fact_states([fact])

    def update_fact_states(self, facts: Sequence[Fact]) -> None:
        """Write back the lifecycle fields; content and identity never change in place."""
        if not facts:
            return
        sets = ", ".join(f"{c} = %s" for c in FACT_STATE_COLUMNS)
        rows = []
        for fact in facts:
            params = fact_state_params(fact)
            rows.append((*(params[c] for c in FACT_STATE_COLUMNS), fact.id))
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(f"UPDATE hg_fact SET {sets} WHERE id = %s", rows)

    def get_facts(self, ids: Sequence[str], *, keep: bool = True) -> dict[str, Fact]:
        """``keep``: whether the facts may stay cached (here nothing is)."""
        if not ids:
            return {}
        rows = self._rows(f"{_FACTS} WHERE id = ANY(%s)", (list(ids),))
        return {fact.id: fact for fact in map(_fact, rows)}

    def get_fact(self, fact_id: str) -> Fact | None:
        return self.get_facts([fact_id]).get(fact_id)

    def all_facts(self) -> Iterator[Fact]:
        return map(_fact, self._stream(f"{_FACTS} ORDER BY created_at, id"))

    def active_facts(self) -> Iterator[Fact]:
        return map(
            _fact, self._stream(f"{_FACTS} WHERE status = ANY(%s) ORDER BY created_at, id", (_ACTIVE,))
        )

    def fact_ids(self) -> set[str]:
        return {str(fid) for (fid,) in self._stream("SELECT id FROM hg_fact")}

    def fact_count(self) -> int:
        """How many facts the graph holds, any status: counted up to ``_COUNTED`` rows, past that
        the planner's count (kept within ~10% by autovacuum's ANALYZE), which is what its readers
        need (the walk's entity specificity, the upkeep's growth) and costs no scan: every search
        asks, and count(*) read the whole table (5.7 ms at 100k facts, ~60 ms at 1M)."""
        ((estimate,),) = self._rows("SELECT reltuples::bigint FROM pg_class WHERE oid = 'hg_fact'::regclass")
        if estimate >= _COUNTED:
            return int(estimate)
        return int(self._rows("SELECT count(*) FROM hg_fact")[0][0])

    def fact_statuses(self) -> dict[str, str]:
        """Every fact's id and status."""
        return {str(fid): str(status) for fid, status in self._stream("SELECT id, status FROM hg_fact")}

    def active_facts_with(self, keys: Iterable[ClaimKey]) -> dict[ClaimKey, list[Fact]]:
        """The active facts of each key (a ``claim_key``), oldest first."""
        asked = list(dict.fromkeys(keys))
        found: dict[ClaimKey, list[Fact]] = {key: [] for key in asked}
        if not asked:
            return found
        subjects, predicates, scopes = (list(part) for part in zip(*asked, strict=True))
        rows = self._rows(
            f"{_FACTS} WHERE (claim_subject, claim_predicate, scope) IN "
            "(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[])) AND status = ANY(%s) "
            "ORDER BY created_at, id",
            (subjects, predicates, scopes, _ACTIVE),
        )
        for fact in map(_fact, rows):
            key = claim_key(fact.subject, fact.predicate, fact.scope)
            if key in found:
                found[key].append(fact)
        return found

    def last_facts_in_sessions(self, sessions: Iterable[SessionKey]) -> dict[SessionKey, str]:
        """The id of the fact written last of each (scope, session) that has one (in the order
        writes committed: one writer at a time holds across servers)."""
        asked = list(dict.fromkeys(sessions))
        if not asked:
            return {}
        scopes, ids = (list(part) for part in zip(*asked, strict=True))
        rows = self._rows(
            "SELECT DISTINCT ON (scope, session_id) scope, session_id, id FROM hg_fact "
            "WHERE (scope, session_id) IN (SELECT * FROM unnest(%s::text[], %s::text[])) "
            "ORDER BY scope, session_id, seq DESC",
            (scopes, ids),
        )
        return {(str(scope), str(session)): str(fid) for scope, session, fid in rows}

    # ------------------------------------------------------------ entities

    @property
    def names(self) -> EntityIndex:
        """The entities by id, name, alias and first name, in the scopes a caller sees."""
        return IndexedEntities(PgNames(self))

    def insert_entities(self, entities: Sequence[Entity]) -> None:
        """Create new entities, and the keys they are found by (the first made keeps a shared one)."""
        if not entities:
            return
        rows = [tuple(entity_params(e)[c] for c in ENTITY_COLUMNS) for e in entities]
        marks = ", ".join(["%s"] * len(ENTITY_COLUMNS))
        keys = [(e.scope, key, e.id) for e in entities for key in name_keys(e)]
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO hg_entity ({', '.join(ENTITY_COLUMNS)}) VALUES ({marks})", rows)
            cur.executemany(
                "INSERT INTO hg_entity_key (scope, key, id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", keys
            )
            self._first_names(cur, entities)

    @staticmethod
    def _first_names(cur: Any, entities: Iterable[Entity]) -> None:
        """The first names these entities are found by (a person's, while of a type found so)."""
        firsts = [(e.scope, first, e.id) for e in entities if (first := first_word(e))]
        cur.executemany("INSERT INTO hg_entity_first VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", firsts)

    def touch_entities(self, mentions: Mapping[str, tuple[int, datetime]]) -> None:
        """Count new mentions: entity id -> (how many, when the last one was)."""
        if not mentions:
            return
        rows = [(count, to_db_time(at), eid) for eid, (count, at) in mentions.items()]
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE hg_entity SET mention_count = mention_count + %s, last_mentioned = %s WHERE id = %s",
                rows,
            )

    def retype_entities(self, types: Mapping[str, str]) -> None:
        """Give known entities the type a later sentence gave them: entity id -> type."""
        if not types:
            return
        with self._conn() as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE hg_entity SET type = %s WHERE id = %s", [(t, e) for e, t in types.items()]
            )
            cur.execute("DELETE FROM hg_entity_first WHERE id = ANY(%s)", (list(types),))
            cur.execute(f"{_ENTITIES} WHERE id = ANY(%s)", (list(types),))  # as retyped, in this transaction
            self._first_names(cur, [_entity(row) for row in cur.fetchall()])

    def entities(self, entity_ids: Sequence[str]) -> dict[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._rows(f"{_ENTITIES} WHERE id = ANY(%s)", (list(entity_ids),))
        return {entity.id: entity for entity in map(_entity, rows)}

    def all_entities(self) -> list[Entity]:
        return [_entity(row) for row in self._stream(f"{_ENTITIES} ORDER BY id")]


def _fact(row: Sequence[Any]) -> Fact:
    return fact_from_row(dict(zip(FACT_COLUMNS, row, strict=True)))


def _entity(row: Sequence[Any]) -> Entity:
    return entity_from_row(dict(zip(ENTITY_COLUMNS, row, strict=True)))


class PgNames:
    """The entity reads ``IndexedEntities`` asks of the database (its ``NameSource``)."""

    def __init__(self, graph: PgGraphStore) -> None:
        self._graph = graph

    def entity(self, entity_id: str) -> Entity | None:
        return self._graph.entities([entity_id]).get(entity_id)

    def entities(self, ids: Collection[str]) -> dict[str, Entity]:
        return self._graph.entities(list(ids))

    def entity_keys(self, keys: Collection[str], scopes: Collection[str]) -> KeyedIds:
        """(scope, key) -> the id of the first entity made in ``scope`` found by ``key``."""
        found: KeyedIds = {}
        rows = self._graph._rows(
            "SELECT scope, key, id FROM hg_entity_key WHERE scope = ANY(%s) AND key = ANY(%s) ORDER BY seq",
            (list(scopes), list(keys)),
        )
        for scope, key, entity_id in rows:
            found.setdefault((str(scope), str(key)), str(entity_id))
        return found

    def first_named(self, key: str, scopes: Collection[str]) -> set[str]:
        rows = self._graph._rows(
            "SELECT id FROM hg_entity_first WHERE scope = ANY(%s) AND first = %s", (list(scopes), key)
        )
        return {str(entity_id) for (entity_id,) in rows}

    def last_named(self, key: str, scopes: Collection[str]) -> set[str]:
        """The people of ``scopes`` whose name of several words ends with the word ``key``."""
        rows = self._graph._rows(
            "SELECT id, name, type FROM hg_entity WHERE scope = ANY(%s) AND type = 'person' "
            "AND lower(name) LIKE %s",
            (list(scopes), f"% {key}"),
        )
        return {str(eid) for eid, name, kind in rows if surname_of(str(name), str(kind)) == key}
