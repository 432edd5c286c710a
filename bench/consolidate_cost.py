"""What a full ``consolidate`` costs on a store: seconds and RSS, the first time and again.

    python -m bench.perf --sizes 100000 --no-peers --no-mcp --keep --work-dir /tmp/p   # a store
    python -m bench.consolidate_cost /tmp/p/store-100000                              # this

Each start is a fresh process that opens the store and then runs ``consolidate`` twice, reading
RSS (``VmRSS``) and its peak (``VmHWM``) from /proc after each step, from two starting states:

- fresh: one search answered, nothing else;
- in use: one remember and 300 searches answered, as a server the background maintenance
  consolidates (it does once enough facts were written since the last run): the write loaded the
  name recogniser and the full secret rules, and the searches filled part of the page caches
  (within the memory budget). From fresh, that loading and filling counts as consolidate's.

Targets (issue 26): 60 s at 100k facts, RSS at most +50 MB. Prints a table and writes it to
``--out`` (default bench/results/consolidate_cost.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "consolidate_cost.md"

_RUN = """
import json, sys, time
from pathlib import Path
from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.malloc_arenas import limit_malloc_arenas, map_large_allocations

limit_malloc_arenas()  # as ``hippograph serve`` does at its start
map_large_allocations()

def status(key):
    text = Path("/proc/self/status").read_text()
    return int(text.split(key + ":")[1].split()[0]) / 1024

memory = Memory.open(Settings(data_dir=Path(sys.argv[1])))
memory.search("who reviewed the gateway last sprint", limit=5)
if sys.argv[2] == "in use":
    from bench.perf.workload import queries

    memory.remember("Noor reviewed the billing gateway on Tuesday", scope="project:consolidate-cost")
    for query in queries(300, 11):
        memory.search(query.text, limit=10)
out = {"facts": memory.graph.fact_count(), "rss_open": status("VmRSS"), "runs": []}
for _ in range(2):
    started = time.perf_counter()
    report = memory.consolidate()
    out["runs"].append({
        "seconds": time.perf_counter() - started,
        "rss": status("VmRSS"),
        "peak": status("VmHWM"),
        "topics": sum(s.topics for s in report.scopes),
    })
memory.close()
print(json.dumps(out))
"""


STARTS = ("fresh", "in use")


def measure(data_dir: Path, start: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(data_dir), start], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def table(data_dir: Path, found: dict[str, dict[str, object]]) -> str:
    facts = next(iter(found.values()))["facts"]
    lines = [
        "# What a full consolidate costs",
        "",
        f"`python -m bench.consolidate_cost {data_dir}` — {datetime.now(UTC).isoformat(timespec='seconds')}, "
        f"{facts:,} facts. RSS before: after open and one search (fresh), and after a remember and 300 "
        "searches besides (in use).",
        "",
        "| start | RSS before (MB) | run | seconds | topics | RSS after (MB) | vs before | peak (MB) "
        "| vs before |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for start, measured in found.items():
        runs = measured["runs"]
        assert isinstance(runs, list)
        base = float(measured["rss_open"])  # type: ignore[arg-type]
        for i, run in enumerate(runs, 1):
            lines.append(
                f"| {start} | {base:.0f} | {i} | {run['seconds']:.1f} | {run['topics']:,} | {run['rss']:.0f} "
                f"| {run['rss'] - base:+.0f} | {run['peak']:.0f} | {run['peak'] - base:+.0f} |"
            )
    lines += ["", "Targets at 100k facts (issue 26): 60 s, RSS at most +50 MB."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    text = table(args.data_dir, {start: measure(args.data_dir, start) for start in STARTS})
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
