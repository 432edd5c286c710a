"""The entities in the graph index (graph_index.py): each entity's row, and the keys it is found
by (its name's, its aliases' and a person's first name's ``name_key``), so resolving a name or
spotting known names in a text is an index lookup.

Until issue 22 every entity lived in Python dicts loaded at open (~4.5 s and growing RSS at a
million facts). Functions over the index's SQLite connection, called under its lock; an entity
changes after it is made only in its mention count and, when a later sentence fixes it, its type.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from hippograph.domain.models import Entity
from hippograph.store.entity_index import KeyedIds, first_word, name_keys, surname_of
from hippograph.store.graph_values import IN_IDS, ids_param, micros, moment
from hippograph.store.rows import from_db_time

SCHEMA = """
CREATE TABLE IF NOT EXISTS entity(id TEXT PRIMARY KEY, scope TEXT NOT NULL, name TEXT NOT NULL,
    folded TEXT NOT NULL, type TEXT NOT NULL, aliases TEXT NOT NULL, summary TEXT NOT NULL,
    mentions INTEGER NOT NULL, first_seen INTEGER, last_mentioned INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entity_key(seq INTEGER PRIMARY KEY, scope TEXT NOT NULL, key TEXT NOT NULL,
    id TEXT NOT NULL, UNIQUE(scope, key, id));
CREATE TABLE IF NOT EXISTS entity_first(scope TEXT NOT NULL, first TEXT NOT NULL, id TEXT NOT NULL,
    PRIMARY KEY(scope, first, id)) WITHOUT ROWID;
"""
INDEXES = """
CREATE INDEX IF NOT EXISTS entity_folded ON entity(folded);
CREATE INDEX IF NOT EXISTS entity_key_id ON entity_key(id);
CREATE INDEX IF NOT EXISTS entity_first_id ON entity_first(id);
"""
TABLES = ("entity", "entity_key", "entity_first")
# What a comparison of two indexes compares (order-free).
PARTS = {
    "entities": "SELECT * FROM {db}.entity",
    "entity_keys": "SELECT scope, key, id FROM {db}.entity_key",
    "first_names": "SELECT * FROM {db}.entity_first",
}


def _time(at: datetime | None) -> int | None:
    return None if at is None else micros(at)


def _from_time(at: int | None) -> datetime | None:
    return None if at is None else from_db_time(moment(at))


def insert(db: sqlite3.Connection, entities: Iterable[Entity]) -> None:
    """Add ``entities`` (in the order they were made: the first made keeps a shared name)."""
    for e in entities:
        db.execute(
            "INSERT OR REPLACE INTO entity VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                e.id,
                e.scope,
                e.name,
                e.name.casefold(),
                e.type,
                json.dumps(e.aliases),
                e.summary,
                e.mention_count,
                _time(e.first_seen),
                _time(e.last_mentioned),
            ),
        )
        db.executemany(
            "INSERT OR IGNORE INTO entity_key(scope, key, id) VALUES (?, ?, ?)",
            [(e.scope, key, e.id) for key in name_keys(e)],
        )
        first = first_word(e)
        if first:
            db.execute("INSERT OR IGNORE INTO entity_first VALUES (?, ?, ?)", (e.scope, first, e.id))


def count_mentions(db: sqlite3.Connection, mentions: Mapping[str, tuple[int, datetime]]) -> None:
    """New mentions: entity id -> (how many, when the last one was)."""
    db.executemany(
        "UPDATE entity SET mentions = mentions + ?, last_mentioned = ? WHERE id = ?",
        [(count, micros(at), entity_id) for entity_id, (count, at) in mentions.items()],
    )


def retype(db: sqlite3.Connection, types: Mapping[str, str]) -> None:
    """Entities' new types (entity id -> type); a person's first name finds it only while it
    is of a type found by first name (``first_word``)."""
    for entity_id, kind in types.items():
        db.execute("UPDATE entity SET type = ? WHERE id = ?", (kind, entity_id))
        db.execute("DELETE FROM entity_first WHERE id = ?", (entity_id,))
        entity = get(db, entity_id)
        first = first_word(entity) if entity is not None else None
        if entity is not None and first:
            row = (entity.scope, first, entity.id)
            db.execute("INSERT OR IGNORE INTO entity_first VALUES (?, ?, ?)", row)


def delete(db: sqlite3.Connection, ids: Collection[str]) -> None:
    given = ids_param(ids)
    for table in TABLES:
        db.execute(f"DELETE FROM {table} WHERE id {IN_IDS}", (given,))


def get(db: sqlite3.Connection, entity_id: str) -> Entity | None:
    row = db.execute("SELECT * FROM entity WHERE id = ?", (entity_id,)).fetchone()
    return None if row is None else _entity(row)


def get_many(db: sqlite3.Connection, ids: Collection[str]) -> dict[str, Entity]:
    rows = db.execute(f"SELECT * FROM entity WHERE id {IN_IDS}", (ids_param(ids),)).fetchall()
    return {str(row[0]): _entity(row) for row in rows}


def _entity(row: tuple[Any, ...]) -> Entity:
    eid, scope, name, _, type_, aliases, summary, mentions, first_seen, last_mentioned = row
    return Entity(
        id=eid,
        name=name,
        type=type_,
        scope=scope,
        aliases=tuple(json.loads(aliases)),
        summary=summary,
        mention_count=mentions,
        first_seen=_from_time(first_seen),
        last_mentioned=_from_time(last_mentioned),
    )


def keyed(db: sqlite3.Connection, keys: Collection[str], scopes: Collection[str]) -> KeyedIds:
    """(scope, key) -> the id of the first entity made in ``scope`` found by ``key``."""
    found: KeyedIds = {}
    rows = db.execute(
        f"SELECT scope, key, id FROM entity_key WHERE scope {IN_IDS} AND key {IN_IDS} ORDER BY seq",
        (ids_param(scopes), ids_param(keys)),
    )
    for scope, key, entity_id in rows:
        found.setdefault((scope, key), entity_id)
    return found


def first_named(db: sqlite3.Connection, first: str, scopes: Collection[str]) -> set[str]:
    rows = db.execute(
        f"SELECT id FROM entity_first WHERE scope {IN_IDS} AND first = ?", (ids_param(scopes), first)
    )
    return {entity_id for (entity_id,) in rows}


def last_named(db: sqlite3.Connection, last: str, scopes: Collection[str]) -> set[str]:
    """The people of ``scopes`` whose name of several words ends with the word ``last``."""
    rows = db.execute(
        f"SELECT id, name, type FROM entity WHERE scope {IN_IDS} AND type = 'person' AND folded LIKE ?",
        (ids_param(scopes), f"% {last}"),
    )
    return {str(eid) for eid, name, kind in rows if surname_of(name, kind) == last}


class EntityRows:
    """The entity reads ``IndexedEntities`` asks of the index (its ``NameSource``), under its lock."""

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db, self._lock = db, lock

    def entity(self, entity_id: str) -> Entity | None:
        with self._lock:
            return get(self._db, entity_id)

    def entities(self, ids: Collection[str]) -> dict[str, Entity]:
        with self._lock:
            return get_many(self._db, ids)

    def entity_keys(self, keys: Collection[str], scopes: Collection[str]) -> KeyedIds:
        with self._lock:
            return keyed(self._db, keys, scopes)

    def first_named(self, key: str, scopes: Collection[str]) -> set[str]:
        with self._lock:
            return first_named(self._db, key, scopes)

    def last_named(self, key: str, scopes: Collection[str]) -> set[str]:
        with self._lock:
            return last_named(self._db, key, scopes)
