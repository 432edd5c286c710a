"""A server's vector index after hours of writing: search speed as the background job leaves it.

    python -m bench.index_upkeep                  # 5,000 facts, 90 minutes of 12 remembers each
    python -m bench.index_upkeep --minutes 30     # a quicker look

Every LanceDB optimize that finds new rows indexes them as a new segment of the ANN index, and
a vector query searches every segment. This bench builds one store (``--facts`` facts through
``remember_many``, the ANN index built as a running server builds it), copies it once per
policy, and plays ``--minutes`` minutes of a server's life on each copy: ``--per-minute``
single remembers (each its own append, as a search between remembers makes it), then the
minute's background job. The policies:

- ``every minute, never rebuilt``: the job as it was until 2026-11-27 (fold every minute in
  which anything was written: ``LanceVectorStore.optimize()``), the baseline;
- ``ours``: ``Memory.tune_indexes()`` (fold when enough waits, build afresh past 8 segments).

Then each copy answers the same questions: ``search`` p50/p95 through the service, and the
floor in the same process, on the same copy: embedding the question plus a bare LanceDB top-10
on the facts table. Printed and written to ``bench/results/index_upkeep-<N>k.md``, with the ANN
index's segments, the appends left unfolded and the job's total seconds.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.growth import hubs, people
from bench.perf.measure import pct
from hippograph.config import DEFAULT_MODEL, Settings, default_models_dir
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.lance_upkeep import ann_segments

RESULTS = Path(__file__).resolve().parent / "results"
_QUESTIONS = 60


def _open(data_dir: Path, models_dir: Path, embedder: FastEmbedder) -> Memory:
    return Memory.open(
        Settings(data_dir=data_dir, models_dir=models_dir, maintenance_interval_s=0), embedder=embedder
    )


def build(data_dir: Path, models_dir: Path, embedder: FastEmbedder, facts: int) -> None:
    memory = _open(data_dir, models_dir, embedder)
    try:
        for start in range(0, facts, 1_000):
            memory.remember_many([{"content": hubs(i)} for i in range(start, min(facts, start + 1_000))])
        memory.tune_indexes()  # the ANN index, as a server's first background run builds it
    finally:
        memory.close()


def _old_job(memory: Memory) -> None:
    memory.vectors.optimize()


def play(memory: Memory, minutes: int, per_minute: int, job: Callable[[Memory], None]) -> float:
    """``minutes`` minutes of single remembers and the background job; the job's seconds."""
    spent = 0.0
    for minute in range(minutes):
        for j in range(per_minute):
            memory.remember(people(100_000 + minute * per_minute + j))
            memory.vectors.flush()  # an append of its own, as a read in between makes it
        t0 = time.perf_counter()
        job(memory)
        spent += time.perf_counter() - t0
    return spent


def measure(memory: Memory, embedder: FastEmbedder) -> dict[str, float]:
    questions = [
        f"Where did {hubs(i).split(' reviewed')[0]} review {hubs(i).split()[2]}?"
        for i in range(7, 7 + _QUESTIONS)
    ]
    table = memory.vectors._tables["facts"]
    for q in questions[:5]:
        memory.search(q, limit=10)
    searched, floor = [], []
    for q in questions:
        t0 = time.perf_counter()
        memory.search(q, limit=10)
        t1 = time.perf_counter()
        vector = embedder.embed([q])[0]
        table.search(vector).limit(10).to_list()
        t2 = time.perf_counter()
        searched.append((t1 - t0) * 1000)
        floor.append((t2 - t1) * 1000)
    return {
        "search_p50": pct(searched)["p50"],
        "search_p95": pct(searched)["p95"],
        "floor_p50": pct(floor)["p50"],
        "segments": float(ann_segments(table) or 0),
    }


def run(facts: int, minutes: int, per_minute: int, work: Path) -> list[dict[str, Any]]:
    models_dir = default_models_dir()
    embedder = FastEmbedder(DEFAULT_MODEL, models_dir)
    base = work / "base"
    print(f"building {facts} facts", flush=True)
    build(base, models_dir, embedder, facts)
    policies: dict[str, Callable[[Memory], None]] = {
        "every minute, never rebuilt (until 2026-11-27)": _old_job,
        "ours": Memory.tune_indexes,
    }
    rows = []
    for name, job in policies.items():
        copy = work / f"copy-{len(rows)}"
        shutil.copytree(base, copy)
        memory = _open(copy, models_dir, embedder)
        try:
            print(f"{name}: {minutes} minutes of {per_minute} remembers", flush=True)
            job_s = play(memory, minutes, per_minute, job)
            figures = measure(memory, embedder)
            unfolded = memory.vectors._appends.fragments
        finally:
            memory.close()
        rows.append({"policy": name, "job_s": job_s, "unfolded": unfolded, **figures})
        print(f"  {rows[-1]}", flush=True)
    return rows


def table(rows: list[dict[str, Any]], facts: int, minutes: int, per_minute: int) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    head = (
        f"# bench.index_upkeep ({datetime.now(UTC):%Y-%m-%d}, commit {commit.strip()})\n\n"
        f"{facts:,} facts, then {minutes} minutes of {per_minute} single remembers and the background "
        "job. The floor: embedding the question plus a bare LanceDB top-10 on the same table.\n\n"
        "| job policy | ANN segments | appends unfolded | search p50 / p95 ms | floor p50 ms "
        "| p50 / floor | job s in all |\n|---|---|---|---|---|---|---|\n"
    )
    lines = [
        f"| {r['policy']} | {r['segments']:.0f} | {r['unfolded']} "
        f"| {r['search_p50']:.1f} / {r['search_p95']:.1f} | {r['floor_p50']:.1f} "
        f"| {r['search_p50'] / r['floor_p50']:.2f}x | {r['job_s']:.1f} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=5_000)
    parser.add_argument("--minutes", type=int, default=90)
    parser.add_argument("--per-minute", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hippograph-upkeep-") as tmp:
        rows = run(args.facts, args.minutes, args.per_minute, Path(tmp))
    text = table(rows, args.facts, args.minutes, args.per_minute)
    print(text)
    (RESULTS / f"index_upkeep-{args.facts // 1000}k.md").write_text(text)


if __name__ == "__main__":
    main()
