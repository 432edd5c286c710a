"""The vector index's storage: half-precision vectors, and older tables converted in place."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store import lance_upkeep
from hippograph.store.embed import FastEmbedder
from hippograph.store.lance_tables import connect
from hippograph.store.vector_rows import cosines
from hippograph.store.vectors import Filter, LanceVectorStore


@pytest.mark.embedded
def test_vectors_are_stored_in_half_precision(memory: Memory) -> None:
    memory.remember("Priya keeps the spare keys in the blue drawer.")
    memory.vectors.flush()
    schema = memory.vectors._tables["facts"].schema
    assert schema.field("vector").type == pa.list_(pa.float16(), memory.embedder.dim)


@pytest.mark.embedded
def test_a_float32_table_of_the_same_model_is_converted_not_re_embedded(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(settings, embedder=embedder)
    fact = mem.remember("The allotment's water is switched off from November to March.")
    mem.close()

    # Rewrite the facts table as schema version 1 wrote it: float32 vectors.
    db = connect(settings.data_dir / "vectors")  # lancedb, as the store imports it
    old = db.open_table("facts").to_arrow()
    meta = json.loads(old.schema.metadata[b"hippograph"])
    v1 = old.schema.set(
        old.schema.get_field_index("vector"), pa.field("vector", pa.list_(pa.float32(), meta["dim"]), False)
    ).with_metadata({b"hippograph": json.dumps({**meta, "version": 1}).encode()})
    db.drop_table("facts")
    db.create_table("facts", data=old.cast(v1), schema=v1)
    stored = np.asarray(old.column("vector").combine_chunks().flatten(), dtype=np.float32)

    embedded: list[list[str]] = []
    real_embed = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts: embedded.append(list(texts)) or real_embed(texts))
    mem = Memory.open(settings, embedder=embedder)
    try:
        table = mem.vectors._tables["facts"]
        assert table.schema.field("vector").type == pa.list_(pa.float16(), meta["dim"])
        converted = table.to_arrow()
        assert converted.column("id").to_pylist() == [fact.id]
        vector = np.asarray(converted.column("vector").combine_chunks().flatten(), dtype=np.float32)
        np.testing.assert_allclose(vector, stored, atol=1e-3)
        assert embedded == []  # carried over, not re-embedded
        hits = mem.search("when is the allotment water off", limit=1).results
        assert [h.id for h in hits] == [fact.id]
    finally:
        mem.close()


def _random_rows(count: int, seed: int = 7) -> tuple[list[str], list[dict[str, Any]], np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"f_{i:016x}" for i in range(count)]
    now = datetime.now(UTC)
    rows = [
        {
            "id": fid,
            "text": f"fact {i}",
            "kind": "fact",
            "status": "staged",
            "scope": "global",
            "session_id": None,
            "tags": [],
            "entity_ids": [],
            "created_at": now,
            "event_time": None,
            "time": now,
        }
        for i, fid in enumerate(ids)
    ]
    return ids, rows, vectors


def test_a_large_enough_table_gets_an_ann_index_that_still_finds_the_nearest(tmp_path: Path) -> None:
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(600)
    store.add("facts", rows, vectors)
    assert store.ensure_vector_index(min_rows=1000) is False  # too small: stays a flat scan
    assert store.ensure_vector_index(min_rows=500) is True
    assert lance_upkeep.ann_segments(store._tables["facts"]) == 1
    hits = store.vector_search("facts", vectors[42], 5, Filter(statuses=("staged",)))
    assert hits[0].id == ids[42]
    store.close()


def test_an_ann_index_of_an_older_type_is_built_afresh_as_ivf_rq(tmp_path: Path) -> None:
    from lancedb.index import IvfHnswSq

    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(600)
    store.add("facts", rows, vectors)
    store.optimize()
    store._tables["facts"].create_index("vector", config=IvfHnswSq(distance_type="cosine", num_partitions=2))
    assert lance_upkeep.ann_segments(store._tables["facts"]) == 1
    assert store.ensure_vector_index(min_rows=500) is True  # one segment, but not IVF-RQ
    [index] = [i for i in store._tables["facts"].list_indices() if "vector" in i.columns]
    assert index.index_type == lance_upkeep.ANN_INDEX_TYPE
    assert store.ensure_vector_index(min_rows=500) is False  # now it is
    assert store.vector_search("facts", vectors[7], 5, Filter(statuses=("staged",)))[0].id == ids[7]
    store.close()


def test_the_ann_index_is_built_afresh_once_optimizes_split_it_into_many_segments(
    tmp_path: Path,
) -> None:
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(600 + 10 * (lance_upkeep.MAX_SEGMENTS + 1))
    store.add("facts", rows[:600], vectors[:600])
    assert store.ensure_vector_index(min_rows=500) is True
    rebuilt_at = None
    for start in range(600, len(ids), 10):  # each optimize indexes its appends as a new segment
        store.add("facts", rows[start : start + 10], vectors[start : start + 10])
        store.optimize()
        segments = lance_upkeep.ann_segments(store._tables["facts"])
        assert segments is not None and segments > 1
        if store.ensure_vector_index():
            assert segments > lance_upkeep.MAX_SEGMENTS  # afresh only past the bound
            rebuilt_at = start
            break
    assert rebuilt_at is not None
    assert lance_upkeep.ann_segments(store._tables["facts"]) == 1
    for i in (42, rebuilt_at + 9):
        assert store.vector_search("facts", vectors[i], 5, Filter(statuses=("staged",)))[0].id == ids[i]
    store.close()


def test_the_background_fold_waits_until_enough_appends_wait(tmp_path: Path) -> None:
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(lance_upkeep.FOLD_FRAGMENTS)
    for i in range(len(ids) - 1):
        store.add("facts", rows[i : i + 1], vectors[i : i + 1])
        store.flush()  # one fragment each
        assert store.optimize(when_due=True) is False
    store.add("facts", rows[-1:], vectors[-1:])
    assert store.optimize(when_due=True) is True
    assert store.optimize(when_due=True) is False  # nothing waits now
    assert store.optimize() is True  # asked for: always
    assert store.count("facts") == len(ids)
    ids, rows, vectors = _random_rows(lance_upkeep.FOLD_ROWS, seed=8)
    store.add("facts", rows, vectors)  # one large append (a bulk import): due by its rows
    assert store.optimize(when_due=True) is True
    assert store.optimize(closing=True) is False  # a close after reads only: nothing to fold
    store.add("facts", rows[:1], vectors[:1])
    assert store.optimize(closing=True) is True  # a close after any append folds it
    store.close()


def test_a_burst_of_writes_that_ends_with_a_fold_due_wakes_the_job_while_folds_take_their_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(2 * lance_upkeep.FOLD_FRAGMENTS)

    def append(i: int) -> None:
        store.add("facts", rows[i : i + 1], vectors[i : i + 1])
        store.flush()  # one fragment each

    def woken(within: float) -> bool:
        return store.fold_wanted.wait(within)  # the writer sets it once no write comes for a while

    for i in range(lance_upkeep.FOLD_FRAGMENTS - 1):
        append(i)
    assert not woken(0.6)  # not due yet
    append(lance_upkeep.FOLD_FRAGMENTS - 1)
    assert woken(10)  # due, and the burst is over: the job is woken, not left to its next tick
    store.fold_wanted.clear()
    assert store.optimize(when_due=True) is True
    # Folding already takes more than its share of the time: the job's tick folds, unwoken.
    monkeypatch.setattr(lance_upkeep, "FOLD_SHARE", 1e-9)
    for i in range(lance_upkeep.FOLD_FRAGMENTS, len(ids)):
        append(i)
    assert not woken(0.6)
    assert store.optimize(when_due=True) is True
    assert store.count("facts") == len(ids)
    store.close()


@pytest.mark.embedded  # PostgreSQL folds nothing
def test_a_served_memory_folds_appends_once_due_not_at_its_next_minute(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lance_upkeep, "FOLD_FRAGMENTS", 3)
    memory.start_background()  # its index job: at once, then every minute, and when woken
    vectors = memory.vectors
    assert isinstance(vectors, LanceVectorStore)
    for i in range(3):
        memory.remember(f"Build {i} of the staging cluster passed on the second try.")
        vectors.flush()  # one fragment each, at least
    deadline = time.monotonic() + 20
    while vectors._appends.fragments and time.monotonic() < deadline:
        time.sleep(0.05)
    assert vectors._appends.fragments == 0


def test_a_close_leaves_a_large_tables_appends_to_the_next_process_which_folds_them_at_once(
    tmp_path: Path,
) -> None:
    """A fold of a table large enough for an ANN index took 2-11 s at 1M facts, more than a stdio
    client waits for a close: the close leaves it, the rows stay searchable, and the next open
    finds them unindexed and makes the fold due for its background job."""
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(610)
    store.add("facts", rows[:600], vectors[:600])
    store.optimize()
    assert store.ensure_vector_index(min_rows=500) is True
    store.add("facts", rows[600:], vectors[600:])
    assert store.optimize(closing=True) is False
    store.close()

    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    assert store._appends.rows == 10 and store._appends.fragments >= 1
    assert store.vector_search("facts", vectors[605], 3, Filter(statuses=("staged",)))[0].id == ids[605]
    assert store.optimize(when_due=True) is True
    store.close()
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    assert store._appends.rows == 0  # nothing left unfolded
    store.close()


def test_the_write_path_skips_a_fold_while_the_ann_index_is_built_and_folds_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lance_upkeep, "OPTIMIZE_EVERY", 3)
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    _, rows, vectors = _random_rows(6)
    with store._index_lock:  # as ensure_vector_index holds it while it builds
        for i in range(5):
            store.add("facts", rows[i : i + 1], vectors[i : i + 1])
            store.flush()  # the write path: it must neither wait nor fail
        assert store._appends.fragments == 5  # still waiting to be folded
        assert store.optimize(closing=True) is False  # a closing store does not wait for a build
    store.add("facts", rows[5:], vectors[5:])
    store.flush()
    assert store._appends.fragments == 0  # folded at the first append after the build
    assert store.count("facts") == 6
    store.close()


def test_a_read_waits_for_the_rows_a_flush_in_progress_is_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LanceVectorStore(tmp_path / "vectors", dim=16, model="test-model")
    ids, rows, vectors = _random_rows(3)
    table = store._tables["facts"]
    real_add, writing = table.add, threading.Event()

    def slow_add(data: Any, *args: Any, **kwargs: Any) -> Any:
        writing.set()
        time.sleep(0.3)  # the rows have left the buffer and are not in LanceDB yet
        return real_add(data, *args, **kwargs)

    monkeypatch.setattr(table, "add", slow_add)
    store.add("facts", rows, vectors)
    store.set_status(ids[:1], "superseded")
    flusher = threading.Thread(target=store.flush)
    flusher.start()
    assert writing.wait(5)
    try:
        assert store.ids("facts") == {ids[0]: "superseded", ids[1]: "staged", ids[2]: "staged"}
    finally:
        flusher.join()
        store.close()


@pytest.mark.embedded
def test_a_table_a_killed_process_left_half_created_is_rebuilt_from_the_graph(
    settings: Settings, embedder: FastEmbedder
) -> None:
    mem = Memory.open(settings, embedder=embedder)
    fact = mem.remember("The allotment shed key hangs behind the kitchen door.", entities=["Allotment"])
    mem.close()
    # What a process killed inside LanceDB's create_table leaves: the table's directory with a
    # transaction file but no committed version, so it is listed and cannot be opened.
    for name in ("facts", "entities"):
        for manifest in (settings.data_dir / "vectors" / f"{name}.lance" / "_versions").iterdir():
            manifest.unlink()

    mem = Memory.open(settings, embedder=embedder)
    try:
        assert mem.vectors.rebuilt == {"facts", "entities"}
        assert mem.vectors.ids("facts") == {fact.id: "staged"}
        assert [h.id for h in mem.vectors.text_search("facts", "shed key", 3)] == [fact.id]
        assert [h.id for h in mem.search("where is the key to the shed", limit=1).results] == [fact.id]
    finally:
        mem.close()


def test_cosines_of_no_rows_is_empty_as_while_a_damaged_table_is_refilled() -> None:
    schema = pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float16(), 4))])
    assert cosines(schema.empty_table(), np.ones(4, dtype=np.float32)) == {}
    row = pa.table({"id": ["f_1"], "vector": [[1.0, 0.0, 0.0, 0.0]]}, schema=schema)
    assert cosines(row, np.ones(4, dtype=np.float32)) == {"f_1": 0.5}


def test_lancedb_opens_without_its_rest_client_which_still_loads_when_asked_for(tmp_path: Path) -> None:
    # A cold start waits for the stores' open: the REST namespace client's API classes
    # (~1.6 s of import) are not loaded for it, and the package still works when used.
    probe = f"""
import sys
from hippograph.store.lance_tables import connect
connect({str(tmp_path)!r}).create_table("t", data=[{{"x": 1}}])
assert not [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")], "API loaded"
from lance_namespace_urllib3_client import ApiClient, TableApi
assert ApiClient.__name__ == "ApiClient" and TableApi.__name__ == "TableApi"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
