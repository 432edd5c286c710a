"""A memory fed one remember at a time over MCP, as capture hooks feed it, until it is big.

    python -m bench.growth                 # 6,000 remembers on each corpus (~10 min on 2 cores)
    python -m bench.growth --n 1000        # a quicker look
    python -m bench.growth --corpus hubs --memory-budget 67108864   # the smallest budget

Two corpora of generated sentences, each in its own data dir, default settings, one stdio
server: ``hubs`` (10 people x 10 things, every fact about two of 20 hub entities, as issue 22
reported) and ``people`` (600 people in 20 cities). Each remember is one tool call; a call that
returns an error counts as a failure. Then the server is stopped, ``hippograph stats`` counts
the facts, and a new server must answer a search and take a remember.

Printed and written to bench/results/growth.md: failures, remember p50/p95 over MCP beside the
floor (this process embedding one sentence with the same model, measured in the same run),
the server's RSS at 1k facts (once it has settled: the feed pauses there until 25 s after its
first call if need be), at the end, and the most of the samples taken every 100 remembers over
the last 1,000 (the end alone falls before or after the background jobs' hand-backs of memory),
and the graph file's bytes per fact.

``--memory-budget`` runs the servers with that HIPPOGRAPH_MEMORY_BUDGET_BYTES: at its 64 MiB
least, ~4,400 remembers about hubs outgrow the graph's page cache for a checkpoint, which once
bricked the store (see KuzuSession._checkpoint_or_reopen; 2026-11-30).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import anyio
import psutil

from hippograph.config import DEFAULT_MODEL
from hippograph.store.embed import FastEmbedder, assemble_default_model
from testkit.client import stdio_session
from testkit.process import run_cli

RESULTS = Path(__file__).resolve().parent / "results" / "growth.md"
# A server settles (Memory._settle_after_start) 10-20 s after its first answered call.
SETTLED_AFTER_S = 25.0
_PEOPLE = ["Sarah", "Tomasz", "Priya", "Lee", "Ana", "Omar", "Kenji", "Mia", "Rajesh", "Zoe"]
_THINGS = ["Terraform", "Kafka", "Postgres", "Redis", "React", "Docker", "Rust", "Falcon", "Atlas", "Vault"]
_FIRST = ["Amara", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
          "Kavya", "Lukas", "Maya", "Nico", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara",
          "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zofia", "Aiden", "Bea", "Caio", "Dana"]  # fmt: skip
_LAST = ["Okafor", "Lindqvist", "Moreau", "Petrov", "Santos", "Haddad", "Berg", "Tanaka", "Costa",
         "Novak", "Iyer", "Weber", "Reyes", "Rossi", "Kowalski", "Garcia", "Murphy", "Sato", "Ali",
         "Keller"]  # fmt: skip
_CITIES = ["Lisbon", "Oslo", "Nairobi", "Lima", "Osaka", "Krakow", "Austin", "Tallinn", "Porto",
           "Seoul", "Dublin", "Hanoi", "Quito", "Accra", "Bergen", "Leeds", "Turin", "Perth", "Cork",
           "Lyon"]  # fmt: skip


def hubs(i: int) -> str:
    person, thing = _PEOPLE[i % 10], _THINGS[(i // 10) % 10]
    return f"{person} reviewed {thing} (note {i}, sprint {i % 37})."


def people(i: int) -> str:
    person = f"{_FIRST[i % 30]} {_LAST[(i // 30) % 20]}"
    return f"{person} flew to {_CITIES[(i * 7) % 20]} for the review in week {i % 52} (trip {i})."


CORPORA: dict[str, Callable[[int], str]] = {"hubs": hubs, "people": people}


def _server_rss(data_dir: Path) -> int:
    """RSS in bytes of the ``hippograph serve`` process on ``data_dir`` (0 if none is found)."""
    for proc in psutil.Process().children(recursive=True):
        try:
            if "serve" in proc.cmdline():
                return int(proc.memory_info().rss)
        except psutil.Error:
            continue
    return 0


def _embed_floor(models_dir: Path, texts: list[str]) -> float:
    """p50 ms of embedding one sentence with the server's model, in this process."""
    embedder = FastEmbedder(DEFAULT_MODEL, models_dir)
    embedder.embed(texts[:5])
    samples = []
    for text in texts:
        t0 = time.perf_counter()
        embedder.embed([text])
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


@dataclass
class Row:
    corpus: str = ""
    n: int = 0
    failures: list[str] = field(default_factory=list)
    p50: float = 0.0
    p95: float = 0.0
    rss_1k: int = 0
    rss_end: int = 0
    rss_peak: int = 0  # the most of the samples taken every 100 remembers over the last 1,000
    floor: float = 0.0
    counted: int = -1
    works: bool = False
    graph_bytes: int = 0


async def _feed(
    data_dir: Path, models_dir: Path, make: Callable[[int], str], row: Row, env: dict[str, str]
) -> None:
    latencies: list[float] = []
    async with stdio_session(data_dir, models_dir, env=env) as session:
        started = time.perf_counter()
        for i in range(row.n):
            t0 = time.perf_counter()
            result = await session.call_tool("remember", {"content": make(i)})
            latencies.append((time.perf_counter() - t0) * 1000)
            if result.is_error:
                row.failures.append(f"#{i + 1}: {str(result.content[0])[:200]}")
            if i + 1 == 1000:
                # Both samples of a settled server: 10-20 s after its first answer it hands back
                # the libraries' pages its start read (~60-90 MB), and 1,000 remembers take
                # about as long, so a sample taken then fell either side of it (378 or 461-469
                # MB at 1k in three runs of one day, the end 459-472).
                await anyio.sleep(max(0.0, SETTLED_AFTER_S - (time.perf_counter() - started)))
                row.rss_1k = _server_rss(data_dir)
            if (i + 1) % 100 == 0 and i + 1 > row.n - 1000:
                row.rss_peak = max(row.rss_peak, _server_rss(data_dir))
            if (i + 1) % 1000 == 0:
                print(f"  {i + 1} remembers, {len(row.failures)} failed", flush=True)
        row.rss_end = _server_rss(data_dir)
    latencies.sort()
    row.p50 = statistics.median(latencies)
    row.p95 = latencies[int(0.95 * (len(latencies) - 1))]


async def _after_restart(data_dir: Path, models_dir: Path, probe: str, env: dict[str, str]) -> bool:
    async with stdio_session(data_dir, models_dir, env=env) as session:
        found = await session.call_tool("search", {"query": probe, "limit": 3})
        stored = await session.call_tool("remember", {"content": "Zoe moved the review to Thursday."})
        return not found.is_error and not stored.is_error and probe.split(" (")[0] in str(found.content)


def run(n: int, corpora: list[str], env: dict[str, str]) -> list[Row]:
    models_dir = Path(tempfile.mkdtemp(prefix="hippograph-models-"))
    assemble_default_model(models_dir)
    rows = []
    for name in corpora:
        make = CORPORA[name]
        row = Row(corpus=name, n=n, floor=_embed_floor(models_dir, [make(i) for i in range(300)]))
        data_dir = Path(tempfile.mkdtemp(prefix=f"hippograph-growth-{name}-")) / "data"
        print(f"{name}: {n} remembers", flush=True)
        anyio.run(_feed, data_dir, models_dir, make, row, env)
        stats = run_cli(data_dir, models_dir, "stats", "--json", **env)
        row.counted = json.loads(stats.stdout)["facts"] if stats.returncode == 0 else -1
        row.works = anyio.run(_after_restart, data_dir, models_dir, make(n // 2), env)
        row.graph_bytes = (data_dir / "graph.kuzu").stat().st_size
        rows.append(row)
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| corpus | remembers | failed | facts after restart | search+remember after restart "
        "| remember p50 / p95 ms | embed one p50 ms (floor) | p50 / floor "
        "| server RSS at 1k / end / peak of the last 1k MB "
        "| graph file bytes/fact |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r.corpus} | {r.n} | {len(r.failures)} | {r.counted} | {'yes' if r.works else 'NO'} "
            f"| {r.p50:.1f} / {r.p95:.1f} | {r.floor:.1f} | {r.p50 / r.floor:.2f}x "
            f"| {r.rss_1k >> 20} / {r.rss_end >> 20} / {r.rss_peak >> 20} | {r.graph_bytes // r.n} |"
        )
        lines += [f"  - {f}" for f in r.failures[:5]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=6000, help="remembers per corpus")
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append", help="default: both")
    parser.add_argument("--memory-budget", type=int, help="HIPPOGRAPH_MEMORY_BUDGET_BYTES for the servers")
    args = parser.parse_args()
    env = {} if args.memory_budget is None else {"HIPPOGRAPH_MEMORY_BUDGET_BYTES": str(args.memory_budget)}
    rows = run(args.n, args.corpus or sorted(CORPORA), env)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    budget = "" if args.memory_budget is None else f", memory budget {args.memory_budget >> 20} MiB"
    out = f"# bench.growth ({datetime.now(UTC):%Y-%m-%d}, commit {commit.strip()}{budget})\n\n{table(rows)}\n"
    print(out)
    (RESULTS if args.memory_budget is None else RESULTS.with_name("growth-small-budget.md")).write_text(out)


if __name__ == "__main__":
    main()
