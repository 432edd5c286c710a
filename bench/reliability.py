"""Reliability at full size: the issue-6 loops the test suite runs small.

    python -m bench.reliability            # 2x500 and 4x500 writers, 20 kill -9 rounds,
                                           # 3,000 fuzz cases, the secrets test split
    python -m bench.reliability --quick    # a fraction of that, to check the harness

Prints writes attempted / acknowledged / found, crashes survived, fuzz cases run, and the
secret catch and false-positive rates; writes bench/results/reliability.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

from bench.secrets import secrets_figures
from hippograph.store.embed import assemble_default_model
from testkit.workloads import concurrent_processes, kill_rounds, owner_kills, verify

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    writes, rounds, fuzz = 500 // scale, max(2, 20 // scale), 3000 // scale
    work = Path(tempfile.mkdtemp(prefix="hippograph-reliability-"))
    models = work / "models"
    assemble_default_model(models)
    rows: list[tuple[str, str]] = []

    for processes in (2, 4):
        start = time.perf_counter()
        data = work / f"procs{processes}"
        tally = anyio.run(concurrent_processes, data, models, processes, writes)
        report = verify(data, models, tally.acknowledged)
        rows.append(
            (
                f"{processes} processes x {writes} concurrent remembers (+{tally.searches} searches)",
                f"attempted {tally.attempted}, acknowledged {len(tally.acknowledged)}, "
                f"missing {report['missing']}, errors {len(tally.errors)}, "
                f"index disagrees {report['index_disagrees']}, {time.perf_counter() - start:.0f} s",
            )
        )
        print(rows[-1], flush=True)

    start = time.perf_counter()
    data = work / "kills"
    tally = anyio.run(kill_rounds, data, models, rounds, 40)
    report = verify(data, models, tally.acknowledged)
    rows.append(
        (
            f"kill -9 mid write-burst, {rounds} rounds",
            f"attempted {tally.attempted}, acknowledged {len(tally.acknowledged)}, "
            f"missing {report['missing']}, duplicated {report['duplicated']}, "
            f"index disagrees {report['index_disagrees']}, crashes survived {rounds}, "
            f"{time.perf_counter() - start:.0f} s",
        )
    )
    print(rows[-1], flush=True)

    start = time.perf_counter()
    data = work / "owner-kills"
    tally = anyio.run(owner_kills, data, models, rounds, 2, 40)
    report = verify(data, models, tally.acknowledged)
    rows.append(
        (
            f"owner kill -9 under 2 writing proxies (retries reach the next owner), {rounds} rounds",
            f"attempted {tally.attempted}, acknowledged {len(tally.acknowledged)}, "
            f"missing {report['missing']}, duplicated {report['duplicated']}, "
            f"errors {len(tally.errors)} ({'; '.join(sorted({e[:90] for e in tally.errors})) or 'none'}), "
            f"index disagrees {report['index_disagrees']}, {time.perf_counter() - start:.0f} s",
        )
    )
    print(rows[-1], flush=True)

    start = time.perf_counter()
    env = {**os.environ, "HIPPOGRAPH_FUZZ_EXAMPLES": str(fuzz)}
    fuzzed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests/test_fuzz.py", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    verdict = fuzzed.stdout.strip().splitlines()[-1] if fuzzed.stdout.strip() else fuzzed.stderr[-200:]
    rows.append(
        (f"fuzz cases through the MCP server ({fuzz})", f"{verdict}, {time.perf_counter() - start:.0f} s")
    )
    print(rows[-1], flush=True)

    caught, total, false_alarms, ordinary = secrets_figures()
    rows.append(
        (
            "secrets corpus, held-out test split (python -m bench.secrets for every context)",
            f"caught {caught}/{total} ({caught / total:.1%}), false positives {false_alarms}/{ordinary} "
            f"({false_alarms / ordinary:.1%})",
        )
    )
    print(rows[-1], flush=True)

    table = "\n".join(
        [
            "# Reliability",
            "",
            f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; nproc {os.cpu_count()}",
            "",
            "| workload | result |",
            "|---|---|",
            *(f"| {name} | {result} |" for name, result in rows),
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "reliability.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
