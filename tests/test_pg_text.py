"""Full text on PostgreSQL: the pruned BM25 (``pg_text.ranked``) answers exactly what scoring every
row that holds a query term answers (worked out here, in Python), on a table whose words are as
skewed as a memory's (a few names in many facts, most words in few)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from hippograph.store import pg_text
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_vectors import PgVectorStore, _where
from hippograph.store.seam import Filter
from testkit.postgres import new_database

DIM = 8
ROWS = 3_000
T0 = datetime(2026, 3, 1, tzinfo=UTC)
# Zipf-like: word i is drawn with weight 1/(i+1), so the first few are in a large share of rows.
WORDS = [f"w{i}x" for i in range(400)]
WEIGHTS = [1 / (i + 1) for i in range(len(WORDS))]


@pytest.fixture(scope="module")
def filled(pg_server: Any) -> Iterator[tuple[PgVectorStore, PgDatabase]]:
    db = PgDatabase(new_database(pg_server))
    store = PgVectorStore(db, dim=DIM, model="test-model")
    rng = random.Random(5)
    rows: list[dict[str, Any]] = [
        {
            "id": f"f_{i:016x}",
            "text": " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(3, 14))),
            "kind": "fact",
            "status": "active" if i % 7 else "superseded",
            "scope": "project:a" if i % 3 else "global",
            "session_id": None,
            "tags": [],
            "entity_ids": [],
            "created_at": T0,
            "event_time": None,
            "time": T0,
        }
        for i in range(ROWS)
    ]
    vectors = np.random.default_rng(5).standard_normal((ROWS, DIM)).astype(np.float32)
    store.add("facts", rows, vectors)
    yield store, db
    store.close()
    db.close()


def _every_row(db: PgDatabase, text: str, k: int, where: Filter | None) -> list[tuple[str, float]]:
    """The answer worked out here: BM25 (k1 1.2, b 0.75) of every row ``where`` admits that holds
    any of the query's terms, with the table's counts; ties (to 12 digits) by id."""
    terms = set(pg_text.terms(text))
    clause, params = _where(where)
    with db.transaction() as conn:
        rows = conn.execute(f"SELECT id, terms FROM hg_vec_facts {clause}", params).fetchall()
        docs = dict(conn.execute("SELECT term, docs FROM hg_vec_terms WHERE tbl = 'hg_vec_facts'").fetchall())
        (words,) = conn.execute(
            "SELECT terms FROM hg_vec_terms WHERE tbl = 'hg_vec_facts' AND term = ''"
        ).fetchone()
    total, avgdl = docs[""], words / docs[""]
    scored = []
    for rid, held in rows:
        score = 0.0
        for term in terms & set(held):
            tf = held.count(term)
            idf = math.log(1 + (total - docs[term] + 0.5) / (docs[term] + 0.5))
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(held) / avgdl))
        if score > 0:
            scored.append((str(rid), score))
    return sorted(scored, key=lambda r: (-round(r[1], 12), r[0]))[:k]


@pytest.mark.parametrize(
    "where",
    [None, Filter(scopes=["project:a"], statuses=["active"]), Filter(scopes=["global"])],
    ids=["everything", "one-scope-active", "global"],
)
def test_pruned_full_text_ranks_exactly_as_scoring_every_row(
    filled: tuple[PgVectorStore, PgDatabase], where: Filter | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, db = filled
    holding = pg_text._holding
    sets_read: list[int] = []  # passes that read the rows of a set of two or more terms

    def spied(sets: Any) -> Any:
        sets_read.extend(len(terms) for terms in sets if len(terms) > 1)
        return holding(sets)

    monkeypatch.setattr(pg_text, "_holding", spied)
    rng = random.Random(11)
    for _ in range(40):
        # One to five words, common and rare ones together, as a memory's queries mix names and words.
        words = [rng.choice(WORDS[:5] if rng.random() < 0.5 else WORDS) for _ in range(rng.randint(1, 5))]
        query = " ".join(words)
        for k in (1, 10, 40):
            hits = store.text_search("facts", query, k, where)
            expected = _every_row(db, query, k, where)
            assert [h.id for h in hits] == [rid for rid, _ in expected], query
            assert [h.score for h in hits] == pytest.approx([s for _, s in expected]), query
    assert sets_read  # the pruned passes were taken, not only the first


def test_a_term_whose_bound_cannot_reach_the_kth_score_is_not_needed() -> None:
    bound = {"rare": 15.0, "common": 2.0, "commonest": 1.0}
    assert pg_text.essential(bound, 3.01) == ["rare"]
    # Just reached by the two together: a row of both could tie, so the commoner must be read.
    assert pg_text.essential(bound, 3.0) == ["common", "rare"]
    assert pg_text.essential(bound, 0.0) == ["commonest", "common", "rare"]


def test_a_row_must_hold_all_of_a_set_of_terms_whose_bounds_reach_the_kth_score() -> None:
    bound = {"rare": 15.0, "a": 2.0, "b": 1.5, "c": 1.0}
    # a and c just reach it together (a tie must be read); b and c cannot.
    assert pg_text.sufficient(bound, 3.0) == [("rare",), ("a", "b"), ("a", "c")]
    assert pg_text.sufficient(bound, 0.0) == [("rare",), ("a",), ("b",), ("c",)]
    assert pg_text.sufficient(bound, 20.0) == []
    many = {f"t{i:02d}": 1.0 for i in range(20)}  # too many terms to list the sets: each alone
    assert pg_text.sufficient(many, 3.0) == [(term,) for term in pg_text.essential(many, 3.0)]
    twelve = {f"t{i:02d}": 1.0 for i in range(12)}  # 220 sets of three: too many sets, each alone
    assert pg_text.sufficient(twelve, 3.0) == [(term,) for term in pg_text.essential(twelve, 3.0)]
    assert len(pg_text.sufficient(twelve, 11.0)) == 12  # every set of eleven


def test_each_terms_most_in_one_row_is_kept_and_filled_for_counts_made_without_it(
    filled: tuple[PgVectorStore, PgDatabase],
) -> None:
    store, db = filled
    with db.transaction() as conn:
        rows = conn.execute("SELECT terms FROM hg_vec_facts").fetchall()
        kept = dict(
            conn.execute("SELECT term, most FROM hg_vec_terms WHERE tbl = 'hg_vec_facts' AND term <> ''")
        )
    most: dict[str, int] = {}
    for (held,) in rows:
        for term in set(held):
            most[term] = max(most.get(term, 0), held.count(term))
    assert kept == most and max(most.values()) > 1  # some rows hold a word twice
    try:
        with db.transaction() as conn:  # as a database made before most was kept
            conn.execute("UPDATE hg_vec_terms SET most = NULL")
        assert [h.id for h in store.text_search("facts", "w0x w1x w7x", 10)] == [
            rid for rid, _ in _every_row(db, "w0x w1x w7x", 10, None)
        ]
    finally:
        with db.transaction() as conn:
            conn.execute(pg_text.MOST_FILLED)
    with db.transaction() as conn:
        filled_again = dict(
            conn.execute("SELECT term, most FROM hg_vec_terms WHERE tbl = 'hg_vec_facts' AND term <> ''")
        )
    assert filled_again == most
