"""The ``python -m bench.perf`` command: a worker process per size, then the peers, then the report."""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench.perf
from bench.perf.build import CACHE_ABOVE, DEFAULT_VECTOR_CACHE
from bench.perf.measure import cpu_pressure, log
from bench.perf.peers import run_peers
from bench.perf.report import write_report
from bench.perf.worker import worker

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "bench" / "results"
DEFAULT_SIZES = (1_000, 10_000, 100_000)


def run_worker(size: int, args: argparse.Namespace, profile: Path | None, timeout: float) -> dict[str, Any]:
    """One size in its own ``python -m bench.perf --worker N`` process; its result, or why there is none."""
    result_path = args.work_dir / f"result-{size}.json"
    cmd = [
        sys.executable,
        "-m",
        "bench.perf",
        "--worker",
        str(size),
        "--work-dir",
        str(args.work_dir),
        "--models-dir",
        str(args.models_dir),
        "--seed",
        str(args.seed),
        "--queries",
        str(args.queries),
        "--result",
        str(result_path),
        "--phase-seconds",
        str(args.phase_seconds),
        *(["--vector-cache", str(args.vector_cache)] if args.vector_cache else ["--no-vector-cache"]),
    ]
    if profile:
        cmd += ["--profile-out", str(profile)]
    if not args.mcp:
        cmd.append("--no-mcp")
    if args.keep:
        cmd.append("--keep")
    if args.reuse:
        cmd.append("--reuse")
    try:
        proc = subprocess.run(cmd, cwd=REPO, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"size": size, "error": f"worker for {size} facts exceeded its {timeout:.0f} s limit"}
    if proc.returncode != 0 or not result_path.exists():
        return {"size": size, "error": f"worker for {size} facts failed (exit {proc.returncode})"}
    return dict(json.loads(result_path.read_text()))


def code_state() -> dict[str, Any]:
    """The commit and any uncommitted change to server/ (other people may edit it during a run)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "server")
    return {"commit": git("rev-parse", "--short", "HEAD"), "server_dirty": dirty.splitlines()}


def versions() -> dict[str, str]:
    out = {}
    for dist in ("hippograph", "ladybug", "lancedb", "fastembed", "onnxruntime", "mcp", "numpy"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            out[dist] = importlib.metadata.version(dist)
    return out


def main_run(args: argparse.Namespace) -> int:
    from hippograph.store.embed import assemble_default_model

    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    assemble_default_model(args.models_dir)
    own_work = args.work_dir is None
    args.work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="hippograph-perf-"))
    args.work_dir.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m bench.perf", *sys.argv[1:]]),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_start": tuple(round(x, 2) for x in os.getloadavg()),
        "cpu_pressure_start": cpu_pressure(),
        "versions": versions(),
        "code": code_state(),
        "seed": args.seed,
        "queries": args.queries,
    }
    log(f"sizes {args.sizes}, {args.queries} queries, work dir {args.work_dir}, load {meta['load_start']}")
    results: list[dict[str, Any]] = []
    largest = max(args.sizes)
    profile_path = args.out / "perf_profile.txt" if args.profile else None
    try:
        for size in sorted(args.sizes):
            elapsed = time.perf_counter() - started
            # Generous: a killed worker would lose the whole size.
            timeout = max(900.0, args.budget * 3 - elapsed)
            r = run_worker(size, args, profile_path if size == largest else None, timeout)
            if "error" in r:
                log(r["error"])
            else:
                results.append(r)
        peers = None
        if args.peers:
            remaining = args.budget - (time.perf_counter() - started)
            limit = max(args.peer_time, min(remaining, 600))
            log(f"peers: up to {limit:.0f} s")
            peers = run_peers(
                sizes=sorted(args.sizes),
                seed=args.seed,
                n_queries=min(args.queries, 100),
                work_dir=args.work_dir / "peers",
                time_limit=limit,
                peer_venv=args.peer_venv,
            )
    finally:
        if own_work and not args.keep:
            shutil.rmtree(args.work_dir, ignore_errors=True)
    meta["load_end"] = tuple(round(x, 2) for x in os.getloadavg())
    meta["cpu_pressure_end"] = cpu_pressure()
    meta["code_end"] = code_state()
    meta["run_seconds"] = round(time.perf_counter() - started, 1)
    if not results:
        log("no size finished")
        return 1
    write_report(args.out, results, peers, meta, profile=bool(args.profile))
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.perf", description=(bench.perf.__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=list(DEFAULT_SIZES),
        help="store sizes, comma-separated (default 1000,10000,100000)",
    )
    parser.add_argument("--queries", type=int, default=200, help="queries per size (default 200)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results dir (default bench/results)")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True, help="run the peers")
    parser.add_argument(
        "--profile",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="profile the largest size into perf_profile.txt",
    )
    parser.add_argument(
        "--mcp",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="cold start and tool calls over stdio",
    )
    parser.add_argument("--budget", type=float, default=1200.0, help="the run's time budget in s (1200)")
    parser.add_argument("--peer-time", type=float, default=300.0, help="least seconds given to the peers")
    parser.add_argument(
        "--phase-seconds",
        type=float,
        default=60.0,
        help="a latency phase stops past this many seconds once it has 30 samples (default 60)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "hippograph-bench" / "models"
    )
    parser.add_argument(
        "--peer-venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "peer-venv",
        help="venv for kuzu-memory (created with pip if missing)",
    )
    parser.add_argument("--work-dir", type=Path, default=None, help="where stores go (default: a temp dir)")
    parser.add_argument(
        "--vector-cache",
        type=Path,
        default=DEFAULT_VECTOR_CACHE,
        help=f"vectors of earlier runs, for building stores above {CACHE_ABOVE:,} facts (default "
        f"{DEFAULT_VECTOR_CACHE}); --no-vector-cache embeds everything",
    )
    parser.add_argument("--no-vector-cache", dest="vector_cache", action="store_const", const=None)
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="use a store a run with --keep built in --work-dir (its build figures are that run's)",
    )
    # worker-only flags
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        args.profile = args.profile_out
        result = worker(args)
        args.result.write_text(json.dumps(result, indent=2, default=str))
        return 0
    return main_run(args)
