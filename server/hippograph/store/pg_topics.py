"""The topics consolidation found, and the pairs of facts it found near each other, in the
memory's PostgreSQL database (``hg_topic``, ``hg_member``, ``hg_pair``): what ``topic_table``
keeps in ``topics.sqlite``, shared by every server of the memory.

Derived structure: ``consolidate`` finds it again. One topic belongs to one scope; a fact
belongs to one topic at most (a second server joining it to a topic at once changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from hippograph.store.pg_database import PgDatabase
from hippograph.store.seam import TopicRow

_COLUMNS = "id, scope, label, size, first, last, entities, central"


def _row(values: Sequence[Any]) -> TopicRow:
    tid, scope, label, size, first, last, entities, central = values
    return TopicRow(
        str(tid),
        str(scope),
        str(label),
        int(size),
        str(first),
        str(last),
        json.loads(entities),
        json.loads(central),
    )


class PgTopicTable:
    """Topics and their members in the memory's database; every method is thread-safe."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def close(self) -> None:
        """Nothing of its own to close: the database is the memory's."""

    # ------------------------------------------------------------ reads

    def _rows(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._db.transaction() as conn:
            return list(conn.execute(query, params).fetchall())

    def topics(self, scopes: Collection[str], *, limit: int) -> list[TopicRow]:
        """The topics of ``scopes``, the most recently active first."""
        query = f"SELECT {_COLUMNS} FROM hg_topic WHERE scope = ANY(%s) ORDER BY last DESC, id LIMIT %s"
        return [_row(r) for r in self._rows(query, (list(scopes), limit))]

    def count(self, scopes: Collection[str]) -> int:
        return int(self._rows("SELECT count(*) FROM hg_topic WHERE scope = ANY(%s)", (list(scopes),))[0][0])

    def get(self, topic_id: str) -> TopicRow | None:
        rows = self._rows(f"SELECT {_COLUMNS} FROM hg_topic WHERE id = %s", (topic_id,))
        return _row(rows[0]) if rows else None

    def members(self, topic_id: str) -> list[str]:
        """A topic's facts, most central first (facts that joined since: last)."""
        return [
            str(f)
            for (f,) in self._rows("SELECT fact FROM hg_member WHERE topic = %s ORDER BY rank", (topic_id,))
        ]

    def of_scope(self, scope: str) -> dict[str, list[str]]:
        """Topic id -> its facts, for every topic of ``scope``."""
        found: dict[str, list[str]] = {}
        with self._db.transaction() as conn:
            for tid, fid in conn.execute(  # row by row (topic_table.TopicTable.of_scope)
                "SELECT m.topic, m.fact FROM hg_member m JOIN hg_topic t ON t.id = m.topic "
                "WHERE t.scope = %s ORDER BY m.topic, m.rank",
                (scope,),
            ):
                found.setdefault(str(tid), []).append(str(fid))
        return found

    def topic_of(self, fact_ids: Collection[str]) -> dict[str, str]:
        """Fact id -> its topic's id, for those of ``fact_ids`` in one."""
        if not fact_ids:
            return {}
        rows = self._rows("SELECT fact, topic FROM hg_member WHERE fact = ANY(%s)", (list(fact_ids),))
        return {str(fid): str(tid) for fid, tid in rows}

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM hg_topic_meta WHERE key = %s", (key,))
        return str(rows[0][0]) if rows else None

    def near_pairs(self, scopes: Collection[str], *, limit: int) -> list[tuple[str, str, float]]:
        """Pairs of facts of ``scopes`` that consolidation found near each other by meaning
        (id, id, similarity), the nearest first."""
        rows = self._rows(
            "SELECT a, b, similarity FROM hg_pair WHERE scope = ANY(%s) "
            "ORDER BY similarity DESC, a, b LIMIT %s",
            (list(scopes), limit),
        )
        return [(str(a), str(b), float(sim)) for a, b, sim in rows]

    # ------------------------------------------------------------ writes

    def replace(
        self,
        scope: str,
        topics: Sequence[TopicRow],
        members: Mapping[str, Sequence[str]],
        pairs: Iterable[tuple[str, str, float]] = (),
    ) -> None:
        """Make ``topics`` (with ``members``: topic id -> fact ids, most central first) the topics
        of ``scope``, and ``pairs`` its near pairs (id, id, similarity), in one transaction."""
        with self._db.transaction() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM hg_pair WHERE scope = %s", (scope,))
            cur.executemany(
                "INSERT INTO hg_pair VALUES (%s, %s, %s, %s) ON CONFLICT (a, b) DO UPDATE "
                "SET scope = excluded.scope, similarity = excluded.similarity",
                ((a, b, scope, sim) for a, b, sim in pairs),
            )
            cur.execute(
                "DELETE FROM hg_member WHERE topic IN (SELECT id FROM hg_topic WHERE scope = %s)", (scope,)
            )
            cur.execute("DELETE FROM hg_topic WHERE scope = %s", (scope,))
            cur.executemany(
                f"INSERT INTO hg_topic ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [(*t[:6], json.dumps(t.entities), json.dumps(t.central)) for t in topics],
            )
            cur.executemany(
                "INSERT INTO hg_member VALUES (%s, %s, %s) ON CONFLICT (fact) DO UPDATE "
                "SET topic = excluded.topic, rank = excluded.rank",
                [(fid, tid, rank) for tid, fids in members.items() for rank, fid in enumerate(fids)],
            )

    def join(self, joins: Sequence[tuple[str, str, str]]) -> None:
        """Add facts to topics: (fact id, topic id, the fact's time as ISO 8601)."""
        with self._db.transaction() as conn:
            for fid, tid, time in joins:
                added = conn.execute(
                    "INSERT INTO hg_member SELECT %s, %s, coalesce(max(rank) + 1, 0) FROM hg_member "
                    "WHERE topic = %s ON CONFLICT (fact) DO NOTHING",
                    (fid, tid, tid),
                )
                if added.rowcount < 1:
                    continue
                conn.execute(
                    "UPDATE hg_topic SET size = size + 1, last = greatest(last, %s), "
                    "first = least(first, %s) WHERE id = %s",
                    (time, time, tid),
                )

    def drop(self, fact_ids: Collection[str]) -> set[str]:
        """Take facts out of their topics and pairs (forgotten or purged); return the topics they left."""
        ids = list(fact_ids)
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM hg_pair WHERE a = ANY(%s) OR b = ANY(%s)", (ids, ids))
            left = conn.execute(
                "DELETE FROM hg_member WHERE fact = ANY(%s) RETURNING fact, topic", (ids,)
            ).fetchall()
            for fid, tid in left:
                row = conn.execute("SELECT central FROM hg_topic WHERE id = %s FOR UPDATE", (tid,)).fetchone()
                central = [c for c in json.loads(row[0]) if c != fid] if row else []
                conn.execute(
                    "UPDATE hg_topic SET size = size - 1, central = %s WHERE id = %s",
                    (json.dumps(central), tid),
                )
        return {str(tid) for _, tid in left}

    def describe(self, topic_id: str, label: str, entities: Sequence[str]) -> None:
        """Set a topic's label and entities anew (after some of its facts left it)."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE hg_topic SET label = %s, entities = %s WHERE id = %s",
                (label, json.dumps(list(entities)), topic_id),
            )

    def set_meta(self, key: str, value: str) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO hg_topic_meta VALUES (%s, %s) ON CONFLICT (key) "
                "DO UPDATE SET value = excluded.value",
                (key, value),
            )
