"""The facts' vectors held in numpy answer ``nearest`` as LanceDB does (issue 22: a remember's
similar facts without a LanceDB query), through adds, status changes, deletions and reopening;
past their share of the memory budget LanceDB answers."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hippograph.store import vectors as vectors_module
from hippograph.store.cache_budget import DEFAULT_SHARES
from hippograph.store.held_vectors import FactRows
from hippograph.store.vectors import Filter, LanceVectorStore

pytestmark = pytest.mark.embedded  # the LanceDB store's own cache

DIM = 16
T0 = datetime(2026, 3, 1, tzinfo=UTC)
SCOPES = ("global", "project:a", "project:b")


def _row(i: int, status: str = "staged") -> dict[str, Any]:
    return {
        "id": f"f_{i:016x}",
        "text": f"note {i}",
        "kind": "fact",
        "status": status,
        "scope": SCOPES[i % 3],
        "session_id": None,
        "tags": [],
        "entity_ids": [],
        "created_at": T0 + timedelta(minutes=i),
        "event_time": None,
        "time": T0 + timedelta(minutes=i),
    }


def _vectors(count: int, seed: int) -> np.ndarray:
    drawn = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return drawn / np.linalg.norm(drawn, axis=1, keepdims=True)


def _answers(store: LanceVectorStore, queries: np.ndarray) -> list[Any]:
    asked = [
        Filter(statuses=["staged", "confirmed"], scopes=["global"]),
        Filter(statuses=["staged", "confirmed"], scopes=["project:a", "global"]),
        Filter(scopes=["project:b"]),
        Filter(statuses=["retracted"]),
    ]
    return [
        [
            [(h.id, round(h.score, 5), h.rank) for h in hits]
            for hits in store.nearest("facts", queries, 4, where)
        ]
        for where in asked
    ]


def test_held_facts_answer_nearest_as_lancedb_does_through_every_kind_of_write(tmp_path: Path) -> None:
    held = LanceVectorStore(tmp_path / "held", dim=DIM, model="m")
    bare = LanceVectorStore(
        tmp_path / "bare", dim=DIM, model="m", cache=dataclasses.replace(DEFAULT_SHARES, held_vectors=0)
    )
    queries = _vectors(5, seed=11)
    vectors = _vectors(120, seed=7)
    try:
        for store in (held, bare):
            store.add("facts", [_row(i) for i in range(60)], vectors[:60])
            store.flush()
        assert _answers(held, queries) == _answers(bare, queries)
        assert isinstance(held._held_table("facts"), FactRows)
        assert bare._held_table("facts") is None

        for store in (held, bare):
            store.add("facts", [_row(i) for i in range(60, 90)], vectors[60:90])  # buffered
        assert _answers(held, queries) == _answers(bare, queries)

        retracted = [_row(i)["id"] for i in range(0, 90, 4)]
        for store in (held, bare):
            store.set_status(retracted, "retracted")
            store.set_status([_row(i)["id"] for i in range(1, 90, 9) if i % 4], "confirmed")
        # Held, a status change counts before it is written (LanceDB's pinned table has the old one).
        active = Filter(statuses=["staged", "confirmed"], scopes=list(SCOPES))
        assert not {h.id for hits in held.nearest("facts", vectors[:90], 3, active) for h in hits} & set(
            retracted
        )
        for store in (held, bare):
            store.optimize()  # LanceDB's pinned table has the old statuses until it is pinned afresh
        assert _answers(held, queries) == _answers(bare, queries)

        for store in (held, bare):
            store.flush()
            store.delete("facts", [_row(i)["id"] for i in range(2, 90, 5)])
            store.add("facts", [_row(i) for i in range(90, 120)], vectors[90:120])
        deleted = {_row(i)["id"] for i in range(2, 90, 5)}
        assert not {h.id for hits in held.nearest("facts", vectors, 3, Filter()) for h in hits} & deleted
        for store in (held, bare):
            store.optimize()
        assert _answers(held, queries) == _answers(bare, queries)
        answers = _answers(held, queries)
    finally:
        held.close()
        bare.close()

    reopened = LanceVectorStore(tmp_path / "held", dim=DIM, model="m")
    try:
        assert _answers(reopened, queries) == answers
    finally:
        reopened.close()


def test_past_their_share_the_facts_are_let_go_and_lancedb_answers(tmp_path: Path) -> None:
    room = 40 * 4 * DIM * 4 // 3 + 1  # the facts' three quarters of it hold 40 rows
    store = LanceVectorStore(
        tmp_path / "v", dim=DIM, model="m", cache=dataclasses.replace(DEFAULT_SHARES, held_vectors=room)
    )
    vectors = _vectors(50, seed=5)
    try:
        store.add("facts", [_row(i) for i in range(30)], vectors[:30])
        first = store.nearest("facts", vectors[:1], 1, Filter(scopes=["global"]))
        assert first[0][0].id == _row(0)["id"] and isinstance(store._held_table("facts"), FactRows)
        store.add("facts", [_row(i) for i in range(30, 50)], vectors[30:])
        assert store._held_table("facts") is None
        last = store.nearest("facts", vectors[48:49], 1, Filter(scopes=[SCOPES[48 % 3]]))
        assert last[0][0].id == _row(48)["id"]
    finally:
        store.close()


def test_an_update_of_columns_not_held_keeps_the_facts_and_a_status_is_set_in_place(tmp_path: Path) -> None:
    store = LanceVectorStore(tmp_path / "v", dim=DIM, model="m")
    vectors = _vectors(12, seed=3)
    try:
        store.add("facts", [_row(i) for i in range(12)], vectors)
        held = store._held_table("facts")
        assert isinstance(held, FactRows)
        store.update("facts", [_row(0)["id"]], {"entity_ids": ["e_0000000000000001"]})  # as link does
        assert store._held_table("facts") is held
        store.update("facts", [_row(3)["id"]], {"status": "retracted"})
        assert store._held_table("facts") is held
        active = Filter(statuses=["staged"], scopes=[SCOPES[0]])
        assert _row(3)["id"] not in {h.id for h in store.nearest("facts", vectors[3:4], 4, active)[0]}
        store.update("facts", [_row(6)["id"]], {"scope": "project:b"})
        assert store._held_table("facts") is not held  # read again, with the new scope
        assert _row(6)["id"] not in {h.id for h in store.nearest("facts", vectors[6:7], 4, active)[0]}
    finally:
        store.close()


def test_held_facts_answer_a_searchs_vector_channel_as_lancedb_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = LanceVectorStore(tmp_path / "held", dim=DIM, model="m")
    bare = LanceVectorStore(
        tmp_path / "bare", dim=DIM, model="m", cache=dataclasses.replace(DEFAULT_SHARES, held_vectors=0)
    )
    vectors = _vectors(90, seed=5)
    asked = [
        None,
        Filter(statuses=["staged", "confirmed"], scopes=["global", "project:a"]),
        Filter(scopes=["project:b"]),
        Filter(statuses=["staged"], kinds=["fact"]),  # a filter the held rows cannot apply: LanceDB
    ]
    try:
        for store in (held, bare):
            store.add("facts", [_row(i, "confirmed" if i % 7 == 0 else "staged") for i in range(90)], vectors)
        for query in _vectors(5, seed=13):
            for where in asked:
                lancedb = bare.vector_search("facts", query, 10, where)
                with monkeypatch.context() as patched:
                    if where is None or not where.kinds:  # answered from numpy: LanceDB is not asked
                        patched.setattr(vectors_module, "nearest_rows", _not_asked)
                    mine = held.vector_search("facts", query, 10, where)
                assert [h.id for h in mine] == [h.id for h in lancedb] and len(mine) == 10
                # LanceDB's cosine of the half-precision vectors, here their dot product with the query.
                assert np.allclose([h.score for h in mine], [h.score for h in lancedb], atol=2e-3)
        ids = [_row(i)["id"] for i in range(0, 90, 3)] + ["f_00000000000000ff"]  # the last one unknown
        lancedb_sims = bare.similarities("facts", ids, vectors[0])
        with monkeypatch.context() as patched:
            patched.setattr(vectors_module, "scan", _not_asked)
            mine_sims = held.similarities("facts", ids, vectors[0])
        assert mine_sims.keys() == lancedb_sims.keys() == set(ids[:-1])
        assert np.allclose([mine_sims[i] for i in ids[:-1]], [lancedb_sims[i] for i in ids[:-1]], atol=2e-3)
    finally:
        held.close()
        bare.close()


def _not_asked(*args: Any) -> None:
    raise AssertionError("LanceDB was queried")
