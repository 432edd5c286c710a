"""The topics consolidation found, and the pairs of facts it found near each other, in SQLite
(``topics.sqlite`` in the data dir).

Derived structure, like the vector index: thrown away and found again by ``consolidate``
(``sqlite_file``: no durability of its own, made afresh if unreadable). What it holds comes from
facts that passed the secret screen, and a purged fact's rows are overwritten as they go.

One topic belongs to one scope; a fact belongs to one topic at most.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from hippograph.store import sqlite_file
from hippograph.store.seam import TopicRow

_FORMAT = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS topic (
    id TEXT PRIMARY KEY, scope TEXT NOT NULL, label TEXT NOT NULL, size INTEGER NOT NULL,
    first TEXT NOT NULL, last TEXT NOT NULL, entities TEXT NOT NULL, central TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS topic_scope ON topic (scope, last);
CREATE TABLE IF NOT EXISTS member (fact TEXT PRIMARY KEY, topic TEXT NOT NULL, rank INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS member_topic ON member (topic, rank);
CREATE TABLE IF NOT EXISTS pair (
    a TEXT NOT NULL, b TEXT NOT NULL, scope TEXT NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS pair_scope ON pair (scope, similarity);
CREATE INDEX IF NOT EXISTS pair_b ON pair (b);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "id, scope, label, size, first, last, entities, central"


def _row(values: Sequence[object]) -> TopicRow:
    tid, scope, label, size, first, last, entities, central = values
    return TopicRow(
        str(tid), str(scope), str(label), int(str(size)), str(first), str(last),
        json.loads(str(entities)), json.loads(str(central)),
    )  # fmt: skip


class TopicTable:
    """Topics and their members in one SQLite file; every method is thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite_file.connect(path, _SCHEMA, layout=_FORMAT)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ------------------------------------------------------------ reads

    def topics(self, scopes: Collection[str], *, limit: int) -> list[TopicRow]:
        """The topics of ``scopes``, the most recently active first."""
        marks = ", ".join("?" * len(scopes))
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM topic WHERE scope IN ({marks}) ORDER BY last DESC, id LIMIT ?",
                (*scopes, limit),
            ).fetchall()
        return [_row(r) for r in rows]

    def count(self, scopes: Collection[str]) -> int:
        marks = ", ".join("?" * len(scopes))
        with self._lock:
            return int(
                self._db.execute(
                    f"SELECT count(*) FROM topic WHERE scope IN ({marks})", (*scopes,)
                ).fetchone()[0]
            )

    def get(self, topic_id: str) -> TopicRow | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM topic WHERE id = ?", (topic_id,)).fetchone()
        return _row(row) if row else None

    def members(self, topic_id: str) -> list[str]:
        """A topic's facts, most central first (facts that joined since: last)."""
        with self._lock:
            rows = self._db.execute("SELECT fact FROM member WHERE topic = ? ORDER BY rank", (topic_id,))
            return [str(fid) for (fid,) in rows.fetchall()]

    def of_scope(self, scope: str) -> dict[str, list[str]]:
        """Topic id -> its facts, for every topic of ``scope``."""
        found: dict[str, list[str]] = {}
        with self._lock:
            # Row by row, not fetched at once: at 100k facts the rows' tuples and strings took
            # ~20 MB of small objects for a moment, and Python's arenas they spread over stayed.
            for tid, fid in self._db.execute(
                "SELECT m.topic, m.fact FROM member m JOIN topic t ON t.id = m.topic "
                "WHERE t.scope = ? ORDER BY m.topic, m.rank",
                (scope,),
            ):
                found.setdefault(str(tid), []).append(str(fid))
        return found

    def topic_of(self, fact_ids: Collection[str]) -> dict[str, str]:
        """Fact id -> its topic's id, for those of ``fact_ids`` in one."""
        if not fact_ids:
            return {}
        marks = ", ".join("?" * len(fact_ids))
        with self._lock:
            rows = self._db.execute(f"SELECT fact, topic FROM member WHERE fact IN ({marks})", (*fact_ids,))
            return {str(fid): str(tid) for fid, tid in rows.fetchall()}

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    # ------------------------------------------------------------ writes

    def near_pairs(self, scopes: Collection[str], *, limit: int) -> list[tuple[str, str, float]]:
        """Pairs of facts of ``scopes`` that consolidation found near each other by meaning
        (id, id, similarity), the nearest first."""
        marks = ", ".join("?" * len(scopes))
        with self._lock:
            rows = self._db.execute(
                f"SELECT a, b, similarity FROM pair WHERE scope IN ({marks}) ORDER BY similarity DESC, a, b "
                "LIMIT ?",
                (*scopes, limit),
            ).fetchall()
        return [(str(a), str(b), float(sim)) for a, b, sim in rows]

    def replace(
        self,
        scope: str,
        topics: Sequence[TopicRow],
        members: Mapping[str, Sequence[str]],
        pairs: Iterable[tuple[str, str, float]] = (),
    ) -> None:
        """Make ``topics`` (with ``members``: topic id -> fact ids, most central first) the topics
        of ``scope``, and ``pairs`` its near pairs (id, id, similarity), in one transaction."""
        with self._writing() as db:
            db.execute("DELETE FROM pair WHERE scope = ?", (scope,))
            db.executemany(
                "INSERT OR REPLACE INTO pair VALUES (?, ?, ?, ?)", ((a, b, scope, sim) for a, b, sim in pairs)
            )
            db.execute("DELETE FROM member WHERE topic IN (SELECT id FROM topic WHERE scope = ?)", (scope,))
            db.execute("DELETE FROM topic WHERE scope = ?", (scope,))
            db.executemany(
                f"INSERT INTO topic ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*t[:6], json.dumps(t.entities), json.dumps(t.central)) for t in topics],
            )
            db.executemany(
                "INSERT OR REPLACE INTO member VALUES (?, ?, ?)",
                ((fid, tid, rank) for tid, fids in members.items() for rank, fid in enumerate(fids)),
            )

    def join(self, joins: Sequence[tuple[str, str, str]]) -> None:
        """Add facts to topics: (fact id, topic id, the fact's time as ISO 8601)."""
        with self._writing() as db:
            for fid, tid, time in joins:
                added = db.execute(
                    "INSERT OR IGNORE INTO member SELECT ?, ?, coalesce(max(rank) + 1, 0) FROM member "
                    "WHERE topic = ?",
                    (fid, tid, tid),
                )
                if added.rowcount < 1:
                    continue
                db.execute(
                    "UPDATE topic SET size = size + 1, last = max(last, ?), first = min(first, ?) "
                    "WHERE id = ?",
                    (time, time, tid),
                )

    def drop(self, fact_ids: Collection[str]) -> set[str]:
        """Take facts out of their topics and pairs (forgotten or purged); return the topics they left."""
        left = self.topic_of(fact_ids)
        with self._writing() as db:
            for fid in fact_ids:
                db.execute("DELETE FROM pair WHERE a = ? OR b = ?", (fid, fid))
            for fid, tid in left.items():
                db.execute("DELETE FROM member WHERE fact = ?", (fid,))
                row = db.execute("SELECT central FROM topic WHERE id = ?", (tid,)).fetchone()
                central = [c for c in json.loads(row[0]) if c != fid] if row else []
                db.execute(
                    "UPDATE topic SET size = size - 1, central = ? WHERE id = ?", (json.dumps(central), tid)
                )
        return set(left.values())

    def describe(self, topic_id: str, label: str, entities: Sequence[str]) -> None:
        """Set a topic's label and entities anew (after some of its facts left it)."""
        with self._writing() as db:
            db.execute(
                "UPDATE topic SET label = ?, entities = ? WHERE id = ?",
                (label, json.dumps(list(entities)), topic_id),
            )

    def set_meta(self, key: str, value: str) -> None:
        with self._writing() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
