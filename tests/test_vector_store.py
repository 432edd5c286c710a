"""The vector index's contract (``store.seam.VectorStore``), kept by the embedded LanceDB index
and the PostgreSQL one alike: writes every read sees, filters, exact similarities, full text,
status and type changes, deletes, a purge, a model change, and the kNN graph topics use."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hippograph.store.pg_vectors import PgVectorStore
from hippograph.store.seam import Filter, VectorStore
from hippograph.store.vector_rows import as_stored, unit
from hippograph.store.vectors import LanceVectorStore

DIM = 16
T0 = datetime(2026, 3, 1, tzinfo=UTC)
TEXTS = [
    "Kafka brokers were moved to the new cluster",
    "Priya reviews the Terraform plan on Mondays",
    "The billing service deploys with ship.sh",
    "Staging resets every Sunday night",
    "Tomasz keeps his climbing gear in the garage loft",
    "Our Kafka consumer lag alert pages the on-call",
]


def _open(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, model: str = "test-model"
) -> VectorStore:
    if kind == "lancedb":
        return LanceVectorStore(tmp_path / "vectors", dim=DIM, model=model)
    return PgVectorStore(request.getfixturevalue("pg_db"), dim=DIM, model=model)


@pytest.fixture(params=["lancedb", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    opened = _open(backend, request, tmp_path)
    yield opened
    opened.close()


def _fid(i: int) -> str:
    return f"f_{i:016x}"


def _vectors(count: int, seed: int = 3) -> np.ndarray:
    """Unit vectors, as the embedder makes them."""
    drawn = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return drawn / np.linalg.norm(drawn, axis=1, keepdims=True)


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "id": _fid(i),
            "text": text,
            "kind": "procedure" if i == 2 else "fact",
            "status": "active",
            "scope": "project:x" if i % 2 else "global",
            "session_id": None,
            "tags": ["ops"] if i in (0, 5) else [],
            "entity_ids": [f"e_{i % 3:016x}"],
            "created_at": T0 + timedelta(days=i),
            "event_time": None,
            "time": T0 + timedelta(days=i),
        }
        for i, text in enumerate(TEXTS)
    ]


def _filled(store: VectorStore) -> np.ndarray:
    vectors = _vectors(len(TEXTS))
    store.add("facts", _rows(), vectors)
    return vectors


def _ids(hits: Any) -> list[str]:
    return [hit.id for hit in hits]


def test_a_vector_search_finds_the_nearest_row_under_each_filter(store: VectorStore) -> None:
    vectors = _filled(store)
    query = vectors[0] + 0.05 * vectors[1]
    best = store.vector_search("facts", query, 3)
    assert best[0].id == _fid(0) and best[0].rank == 1
    assert best[0].score == pytest.approx(float(unit(query) @ unit(as_stored(vectors[0]))), abs=2e-3)
    assert set(_ids(store.vector_search("facts", query, 10, Filter(scopes=["project:x"])))) == {
        _fid(1),
        _fid(3),
        _fid(5),
    }
    assert _ids(store.vector_search("facts", query, 10, Filter(kinds=["procedure"]))) == [_fid(2)]
    assert set(_ids(store.vector_search("facts", query, 10, Filter(tags_any=["ops"])))) == {_fid(0), _fid(5)}
    entity = Filter(entity_ids_any=[f"e_{1:016x}"])
    assert set(_ids(store.vector_search("facts", query, 10, entity))) == {_fid(1), _fid(4)}
    assert _ids(store.vector_search("facts", query, 10, Filter(ids=[_fid(3)]))) == [_fid(3)]
    span = Filter(after=T0 + timedelta(days=2), before=T0 + timedelta(days=4))
    assert set(_ids(store.vector_search("facts", query, 10, span))) == {_fid(2), _fid(3)}


def test_nearest_gives_each_query_its_rows_with_exact_similarities(store: VectorStore) -> None:
    vectors = _filled(store)
    found = store.nearest("facts", vectors[[0, 3]], 2, Filter(statuses=["active"]))
    assert [hits[0].id for hits in found] == [_fid(0), _fid(3)]
    for hits, query in zip(found, vectors[[0, 3]], strict=True):
        assert len(hits) == 2
        for hit in hits:
            stored = as_stored(vectors[int(hit.id[2:], 16)])
            assert hit.score == pytest.approx(float(unit(query) @ stored), abs=1e-5)
    assert store.nearest("facts", vectors[:1], 3, Filter(scopes=["project:none"])) == [[]]


def test_full_text_finds_any_of_the_words_under_a_filter(store: VectorStore) -> None:
    _filled(store)
    assert set(_ids(store.text_search("facts", "kafka", 5))) == {_fid(0), _fid(5)}
    assert _ids(store.text_search("facts", "kafka", 5, Filter(scopes=["global"]))) == [_fid(0)]
    assert _fid(1) in _ids(store.text_search("facts", "Terraform reviews", 5))
    assert store.text_search("facts", "zeppelin", 5) == []


def test_full_text_begun_early_answers_as_run_at_once(store: VectorStore) -> None:
    """A search begins its keyword query before it embeds the query, and waits for it after."""
    _filled(store)
    where = Filter(scopes=["global"])
    words = ("kafka", "Terraform reviews", "zeppelin", " ")
    begun = [store.start_text_search("facts", w, 5, where) for w in words]
    assert [_ids(wait()) for wait in begun] == [_ids(store.text_search("facts", w, 5, where)) for w in words]
    assert _ids(begun[0]()) == [_fid(0)]


def test_status_and_type_changes_and_deletes_show_in_every_read(store: VectorStore) -> None:
    vectors = _filled(store)
    store.set_status([_fid(0), _fid(2)], "superseded")
    assert _fid(0) not in _ids(store.vector_search("facts", vectors[0], 6, Filter(statuses=["active"])))
    entity_vectors = _vectors(2, seed=5)
    entities = [
        {"id": f"e_{i:016x}", "text": name, "type": "concept", "scope": "global"}
        for i, name in enumerate(["Quillon", "Marlowe"])
    ]
    store.add("entities", entities, entity_vectors)
    store.update("entities", [f"e_{1:016x}"], {"type": "tool"})
    assert store.ids("entities") == {f"e_{0:016x}": "concept", f"e_{1:016x}": "tool"}
    store.delete("facts", [_fid(4)])
    statuses = store.ids("facts")
    assert (statuses[_fid(0)], statuses[_fid(1)], _fid(4) in statuses) == ("superseded", "active", False)
    assert (store.count("facts"), store.count("entities")) == (5, 2)
    sims = store.similarities("facts", [_fid(1), _fid(4)], vectors[1])
    assert list(sims) == [_fid(1)] and sims[_fid(1)] == pytest.approx(1.0, abs=2e-3)


def test_an_erased_row_is_gone_from_every_read(store: VectorStore) -> None:
    vectors = _filled(store)
    store.erase([_fid(0)], [])
    assert _fid(0) not in store.ids("facts")
    assert _fid(0) not in _ids(store.vector_search("facts", vectors[0], 6))
    assert _fid(0) not in _ids(store.text_search("facts", "kafka", 6))


def test_a_built_vector_index_is_built_once_and_still_finds_the_nearest(store: VectorStore) -> None:
    vectors = _filled(store)
    many = _vectors(300, seed=11)
    rows = [dict(_rows()[i % 6], id=_fid(100 + i)) for i in range(300)]
    store.add("facts", rows, many)
    assert store.ensure_vector_index("facts", min_rows=256) is True
    assert store.ensure_vector_index("facts", min_rows=256) is False
    assert store.vector_search("facts", vectors[3], 1)[0].id == _fid(3)
    assert len(store.vector_search("facts", vectors[3], 1200)) == 306  # more than any search width


def test_each_row_gets_its_nearest_others_for_topics(store: VectorStore) -> None:
    vectors = _filled(store)
    found = store.neighbours("facts", Filter(scopes=["global"]), 1)
    assert sorted(found.ids) == [_fid(0), _fid(2), _fid(4)]
    assert len(found.src) == 3
    for src, dst, similarity in zip(found.src, found.dst, found.similarity, strict=True):
        a, b = (vectors[int(found.ids[n][2:], 16)] for n in (src, dst))
        assert similarity == pytest.approx(float(unit(a) @ unit(b)), abs=0.02)


def test_an_index_opened_for_another_model_is_made_afresh_empty(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    first = _open(backend, request, tmp_path)
    _filled(first)
    first.close()
    again = _open(backend, request, tmp_path)
    assert (again.rebuilt, again.count("facts")) == (set(), len(TEXTS))
    again.close()
    other = _open(backend, request, tmp_path, model="another-model")
    assert (other.rebuilt, other.count("facts")) == ({"facts", "entities"}, 0)
    other.close()
