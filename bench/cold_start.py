"""Cold start of the stdio server, spawn to the first answered ``search``, against its floor.

    python -m bench.cold_start                          # a 6,000-fact store, 5 rounds
    python -m bench.cold_start --against ../old/server  # the same, beside another checkout's server

The floor is a fresh Python that loads the same embedding model and embeds one text (as in
``bench.perf``). Each round measures the floor, then each server in turn, so a machine that
slows down mid-run slows every column alike; the table gives medians and the ratio to the
floor's median. The store (generated facts about 20 people and 8 things, built once through
``remember_many``, its indexes tuned as a running server tunes them) is kept in ``--work-dir``
between runs; each server opens its own copy.
``--against DIR`` runs ``hippograph serve`` with ``PYTHONPATH=DIR`` (a ``server/`` directory of
another checkout), the same interpreter and packages.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from bench.perf.servers import cold_floor_s
from hippograph.config import Settings, default_models_dir
from hippograph.service.memory import Memory
from testkit.client import call_tool, connect_stdio
from testkit.process import PYTHON, server_env

RESULTS = Path(__file__).resolve().parent / "results" / "cold_start.md"
_PEOPLE = [f"Person{i}" for i in range(20)]
_THINGS = [
    "Terraform",
    "Kafka",
    "Postgres",
    "the billing service",
    "Grafana",
    "the release",
    "Jenkins",
    "Vault",
]


def build_store(data_dir: Path, models_dir: Path, facts: int) -> None:
    memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir))
    try:
        items = [
            {"content": f"{_PEOPLE[i % 20]} reviewed {_THINGS[i % 8]} (note {i}, sprint {i // 50})."}
            for i in range(facts)
        ]
        for start in range(0, facts, 500):
            memory.call("remember_many", {"items": items[start : start + 500]})
        memory.tune_indexes()  # as a server does in the background before it is restarted
    finally:
        memory.close()


async def first_search_s(data_dir: Path, models_dir: Path, extra_env: dict[str, str], log: Path) -> float:
    t0 = time.perf_counter()
    with log.open("a") as errlog:
        env = server_env(data_dir, models_dir, **extra_env)
        async with connect_stdio(
            PYTHON, ["-m", "hippograph", "serve"], env, errlog=errlog, timeout=120
        ) as session:
            await call_tool(session, "search", {"query": "who reviewed Kafka?", "limit": 10})
            return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout's server/ directory")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/hippograph-cold-start"))
    args = parser.parse_args()
    models_dir = default_models_dir()
    store = args.work_dir / f"store-{args.facts}"
    if not store.exists():
        build_store(store, models_dir, args.facts)
    servers = {"this checkout": {}}
    if args.against:
        servers[f"{args.against}"] = {"PYTHONPATH": str(args.against.resolve())}
    floors: list[float] = []
    firsts: dict[str, list[float]] = {name: [] for name in servers}
    for round_ in range(args.rounds):
        floors.append(cold_floor_s(models_dir))
        for name, env in servers.items():
            copy = args.work_dir / "copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(store, copy)
            firsts[name].append(
                anyio.run(first_search_s, copy, models_dir, env, args.work_dir / "server.log")
            )
        shown = ", ".join(f"{name} {times[-1]:.2f} s" for name, times in firsts.items())
        print(f"round {round_ + 1}: floor {floors[-1]:.2f} s, first search: {shown}", flush=True)
    floor = statistics.median(floors)
    lines = [
        f"# Cold start at {args.facts:,} facts ({datetime.now(UTC):%Y-%m-%d}, {args.rounds} rounds)",
        "",
        "| server | first answered search, median (s) | range (s) | ratio to the floor |",
        "|---|---|---|---|",
        f"| floor: fresh Python, model loaded, one text embedded | {floor:.2f} | "
        f"{min(floors):.2f}-{max(floors):.2f} | 1.00 |",
    ]
    for name, times in firsts.items():
        median = statistics.median(times)
        lines.append(f"| {name} | {median:.2f} | {min(times):.2f}-{max(times):.2f} | {median / floor:.2f} |")
    print("\n".join(lines))
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
