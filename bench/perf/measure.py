"""How perf measures: percentiles, timed loops, disk and memory of processes, and the floor.

The floor is what search cannot beat on the same table in the same process: the model
embedding one query, a bare LanceDB query, exact numpy top-k.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.perf.workload import GenFact, Query

EMBED_BATCH_TEXTS = 1024


def pct(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 (numpy's linear interpolation), mean and n of latency samples; {} if none."""
    if not samples_ms:
        return {}
    arr = np.asarray(samples_ms, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(arr, 50)), 3),
        "p95": round(float(np.percentile(arr, 95)), 3),
        "p99": round(float(np.percentile(arr, 99)), 3),
        "mean": round(float(arr.mean()), 3),
        "n": len(samples_ms),
    }


def timed(
    fn: Callable[[Any], Any], items: Sequence[Any], seconds: float | None = None, minimum: int = 30
) -> list[float]:
    """Latency in ms of ``fn`` per item; stops early past ``seconds`` once ``minimum`` samples exist."""
    out: list[float] = []
    started = time.perf_counter()
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t0) * 1000.0)
        if seconds is not None and len(out) >= minimum and time.perf_counter() - started > seconds:
            break
    return out


def du_bytes(path: Path) -> int:
    """Bytes on disk (allocated blocks), like ``du -s``."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def apparent_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


_VM_FIELDS = {"VmRSS": "now", "VmHWM": "peak", "RssAnon": "anon", "RssFile": "files"}


def vm_status(pid: int | None) -> dict[str, float] | None:
    """Current and peak resident set of a process, MB (VmRSS, VmHWM), what is resident now of its
    anonymous memory and of files it maps (its libraries' code, mostly), and of pages shared."""
    if pid is None:
        return None
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name = line.split(":", 1)[0]
            if name in _VM_FIELDS:
                out[_VM_FIELDS[name]] = round(int(line.split()[1]) / 1024.0, 1)
        # Pages another process maps too (the bench worker maps the same libraries): the server
        # cannot hand them back (code_pages), and they are in RAM once for both.
        shared = 0
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(("Shared_Clean:", "Shared_Dirty:")):
                shared += int(line.split()[1])
        out["shared"] = round(shared / 1024.0, 1)
    except OSError:
        return None
    return out


def cpu_pressure() -> str | None:
    """Linux PSI: the share of time some runnable task waited for a CPU (avg over 60 s)."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = dict(part.split("=") for part in line.split()[1:])
    return f"{fields.get('avg60', '?')}%"


def log(message: str, source: str = "perf") -> None:
    print(f"[{source} {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def fixed_list_matrix(column: Any) -> np.ndarray:
    """A pyarrow column of fixed-size float lists as an (n, dim) float32 matrix."""
    flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(len(column), -1)


def table_vectors(table: Any) -> np.ndarray:
    data = table.search().select(["vector"]).limit(None).to_arrow()
    return fixed_list_matrix(data.column("vector"))


def measure_floor(memory: Any, qs: Sequence[Query]) -> dict[str, Any]:
    """The floor, same process, same table: model alone, bare LanceDB, exact numpy top-k.

    Bare LanceDB is the table opened as anyone would open it (``lancedb.connect``, its default
    caches: 6 GiB of index pages), not through the store's connection, whose caches are bounded
    by the memory budget: what that bound costs shows as ours against the floor.
    """
    import lancedb

    from hippograph.domain.models import ACTIVE_STATUSES
    from hippograph.store.vectors import Filter

    table = lancedb.connect(str(memory.vectors.path)).open_table("facts")
    matrix = table_vectors(table)
    embed = memory.embedder.embed
    for q in qs[:5]:
        table.search(embed([q.text])[0]).limit(10).to_list()
    embed_ms, lance_ms, numpy_ms, pipeline_ms, numpy_pipeline_ms, shaped_ms = [], [], [], [], [], []
    where = Filter(statuses=ACTIVE_STATUSES, scopes=("global",))
    for q in qs:
        t0 = time.perf_counter()
        vec = embed([q.text])[0]
        t1 = time.perf_counter()
        table.search(vec).limit(10).to_list()
        t2 = time.perf_counter()
        scores = matrix @ vec
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]
        t3 = time.perf_counter()
        memory.vectors.vector_search("facts", vec, 40, where)
        t4 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000)
        lance_ms.append((t2 - t1) * 1000)
        numpy_ms.append((t3 - t2) * 1000)
        shaped_ms.append((t4 - t3) * 1000)
        pipeline_ms.append((t2 - t0) * 1000)
        numpy_pipeline_ms.append((t1 - t0 + t3 - t2) * 1000)
    return {
        "embed_one": pct(embed_ms),
        "lance_bare": pct(lance_ms),
        "numpy_topk": pct(numpy_ms),
        "lance_as_ours": pct(shaped_ms),
        "floor_pipeline": pct(pipeline_ms),
        "numpy_pipeline": pct(numpy_pipeline_ms),
        "vectors_in_table": int(matrix.shape[0]),
    }


def embed_batch_throughput(embedder: Any, facts: Sequence[GenFact]) -> dict[str, Any]:
    texts = [f.content for f in facts[:EMBED_BATCH_TEXTS]]
    embedder.embed(texts[:64])
    t0 = time.perf_counter()
    for s in range(0, len(texts), 64):
        embedder.embed(texts[s : s + 64])
    seconds = time.perf_counter() - t0
    return {
        "texts": len(texts),
        "batch": 64,
        "seconds": round(seconds, 3),
        "texts_per_s": round(len(texts) / seconds, 1),
    }
