"""Measure one store size in this process: build, warm latency, floor, profile, disk, then MCP.

``python -m bench.perf`` runs this once per size in a fresh worker process (``--worker N``), so
the peak RSS of one size does not leak into the next.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bench.perf.build import CACHE_ABOVE, CachedEmbedder, build, open_memory
from bench.perf.bulk import build_by_import
from bench.perf.measure import (
    apparent_bytes,
    du_bytes,
    embed_batch_throughput,
    log,
    measure_floor,
    pct,
    peak_rss_mb,
    timed,
)
from bench.perf.profiling import isolated_costs, profile_paths
from bench.perf.servers import MCP_REMEMBER_SAMPLES, WIRE_REMEMBER_SAMPLES, mcp_phase, wire_phase
from bench.perf.workload import Query, corpus, event_times, queries, remember_kwargs

REMEMBER_SAMPLES = 300
PROFILE_REMEMBERS = 20
# Beside a store a run kept: its build figures, so a later run with --reuse can skip the build.
BUILT = "bench-build.json"


def worker(args: argparse.Namespace) -> dict[str, Any]:
    """Size ``args.worker``, start to end: every figure of that size, as a JSON-able dict."""
    from hippograph.config import DEFAULT_MODEL
    from hippograph.store.embed import FastEmbedder

    size = args.worker
    data_dir = args.work_dir / f"store-{size}"
    built_file = data_dir / BUILT
    reused = args.reuse and built_file.is_file()
    if not reused:
        shutil.rmtree(data_dir, ignore_errors=True)
    t_load = time.perf_counter()
    embedder = FastEmbedder(DEFAULT_MODEL, args.models_dir)
    result: dict[str, Any] = {"size": size, "model_load_s": round(time.perf_counter() - t_load, 2)}
    extra_n = REMEMBER_SAMPLES + PROFILE_REMEMBERS + MCP_REMEMBER_SAMPLES + WIRE_REMEMBER_SAMPLES
    stream = corpus(size + extra_n, args.seed)
    facts, extra = stream[:size], stream[size:]
    times = event_times(size + extra_n, total=size)
    # New facts for the remember samples, the profile and the MCP calls: the stream's continuation.
    cut1, cut2 = REMEMBER_SAMPLES, REMEMBER_SAMPLES + PROFILE_REMEMBERS
    rem_facts, rem_times = extra[:cut1], times[size : size + cut1]
    prof_facts, prof_times = extra[cut1:cut2], times[size + cut1 : size + cut2]
    mcp_facts, mcp_times = extra[cut2:], times[size + cut2 :]
    qs = queries(args.queries, args.seed)
    result["corpus"] = {
        "facts": size,
        "sessions": len({f.session_id for f in facts}),
        "causes": sum(f.cause is not None for f in facts),
        "with_spo": sum(f.subject is not None for f in facts),
        "kinds": {k: sum(f.kind == k for f in facts) for k in sorted({f.kind for f in facts})},
        "distinct_entities": len({e for f in facts for e in f.entities}),
        "mean_chars": round(statistics.fmean(len(f.content) for f in facts), 1),
    }
    before = embed_batch_throughput(embedder, stream)
    log(f"  embedding model batch throughput: {before['texts_per_s']} texts/s")

    # 1. build
    cached = (
        CachedEmbedder(embedder, args.vector_cache, args.models_dir)
        if args.vector_cache and size > CACHE_ABOVE
        else None
    )
    memory = open_memory(data_dir, args.models_dir, cached or embedder)
    try:
        if reused:
            log(f"size {size}: reusing the store built before ({built_file})")
            result["build"] = {**json.loads(built_file.read_text()), "reused": True}
        elif cached is not None:
            log(f"size {size}: building by import ({cached.loaded:,} vectors cached)")
            result["build"] = build_by_import(memory, facts, times, args.seed)
        else:
            log(f"size {size}: building by remember_many")
            result["build"] = build(memory, facts, times)
    finally:
        memory.close()
    if not reused:
        built_file.write_text(json.dumps(result["build"]))
    if cached is not None:
        cached.save()
        result["build"]["vectors_cached"] = cached.hits
        result["build"]["vectors_embedded"] = cached.misses
    rate = result["build"].get("facts_per_s")
    log(f"  built in {result['build']['seconds']} s" + (f" ({rate} facts/s)" if rate else ""))
    # Again after the build: the machine's load moves, and the bulk ratio needs both sides alike.
    after = embed_batch_throughput(embedder, stream)
    result["embed_batch"] = {
        **before,
        "texts_per_s_before_build": before["texts_per_s"],
        "texts_per_s_after_build": after["texts_per_s"],
        "texts_per_s": round((before["texts_per_s"] + after["texts_per_s"]) / 2, 1),
    }
    log(f"  embedding model batch throughput after the build: {after['texts_per_s']} texts/s")

    # 2. reopen, as a restarted server would see it
    open_profile = None
    if args.profile:
        with contextlib.suppress(ImportError):
            from pyinstrument import Profiler

            open_profile = Profiler(interval=0.001)
            open_profile.start()
    t0 = time.perf_counter()
    memory = open_memory(data_dir, args.models_dir, embedder)
    result["reopen_s"] = round(time.perf_counter() - t0, 2)
    if open_profile is not None:
        open_profile.stop()
    try:
        result["stats"] = {
            k: v for k, v in memory.stats().items() if k not in ("by_scope", "last_maintenance", "disk_bytes")
        }
        # What a running server does in the background (the ANN index above 20k facts), before timing.
        t0 = time.perf_counter()
        memory.tune_indexes()
        result["tune_indexes_s"] = round(time.perf_counter() - t0, 2)
        for q in qs[:5]:
            memory.search(q.text, limit=10)
            memory.recall(q.text, budget_tokens=1000)

        # 3. warm latency, ours (each phase: all queries, or stop past --phase-seconds with >= 30 samples)
        cap = args.phase_seconds
        log(f"  search/recall x {len(qs)} queries, graph on and off")
        failed: dict[str, int] = {}
        degraded_notes: set[str] = set()

        def checked(phase: str, call: Callable[[Query], Any]) -> Callable[[Query], Any]:
            # A search that degraded (e.g. "graph expansion failed ...") still answers: count it.
            def run(q: Query) -> None:
                out = call(q)
                bad = [note for note in getattr(out, "notes", ()) if "fail" in note]
                if bad:
                    failed[phase] = failed.get(phase, 0) + 1
                    degraded_notes.update(bad)

            return run

        def search(q: Query) -> Any:
            return memory.search(q.text, limit=10)

        def recall(q: Query) -> Any:
            return memory.recall(q.text, budget_tokens=1000)

        for phase, call, graph_on in (
            ("search_graph", search, True),
            ("recall_graph", recall, True),
            ("search_nograph", search, False),
            ("recall_nograph", recall, False),
        ):
            memory.retriever.with_policy(graph=graph_on)
            result[phase] = pct(timed(checked(phase, call), qs, cap))
        memory.retriever.with_policy(graph=True)
        result["degraded"] = failed
        result["degraded_notes"] = sorted(degraded_notes)
        if failed:
            log(f"  degraded answers (a note says something failed): {failed}")

        # 4. floor
        log("  floor: model alone, bare LanceDB, numpy top-k")
        result["floor"] = measure_floor(memory, qs)

        # profile (largest size), before the remember samples so the store is still size N for reads
        if args.profile:
            log("  profiling search, recall and remember")
            report, result["stages"] = profile_paths(memory, qs[: min(len(qs), 10)], prof_facts, prof_times)
            result["isolated"] = isolated_costs(args.models_dir)
            if open_profile is not None:
                text = open_profile.output_text(unicode=False, color=False, show_all=False)
                lines = [ln for ln in text.splitlines() if ln.strip()][:60]
                report += f"### pyinstrument: Memory.open of the built store ({result['reopen_s']} s)\n\n"
                report += "\n".join(lines) + "\n"
            args.profile.write_text(
                f"# hippograph perf profile at {size} facts ({datetime.now(UTC).isoformat()[:19]}Z)\n"
                f"# load average at start: {os.getloadavg()}\n\n{report}"
            )

        # remember, service path
        log(f"  remember x {REMEMBER_SAMPLES} (service path)")
        pairs = list(zip(rem_facts, rem_times, strict=True))
        result["remember"] = pct(
            timed(
                lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])), pairs, cap
            )
        )
    finally:
        memory.close()
    result["worker_peak_rss_mb"] = round(peak_rss_mb(), 1)

    # 5. disk
    facts_now = size + REMEMBER_SAMPLES + (PROFILE_REMEMBERS if args.profile else 0)
    disk = du_bytes(data_dir)
    graph_bytes = sum(
        du_bytes(p) if p.is_dir() else p.stat().st_blocks * 512 for p in data_dir.glob("graph.kuzu*")
    )
    vectors_bytes = du_bytes(data_dir / "vectors")
    result["disk"] = {
        "bytes": disk,
        "apparent_bytes": apparent_bytes(data_dir),
        "graph_bytes": graph_bytes,
        "vectors_bytes": vectors_bytes,
        "facts": facts_now,
        "bytes_per_fact": round(disk / facts_now, 1),
        "graph_bytes_per_fact": round(graph_bytes / facts_now, 1),
        "vectors_bytes_per_fact": round(vectors_bytes / facts_now, 1),
        "vector_versions": len(list((data_dir / "vectors").glob("*.lance/_versions/*"))),
    }

    # 6. MCP: cold start, remember and search through the tools
    if args.mcp:
        import anyio

        try:
            result["mcp"] = anyio.run(mcp_phase, data_dir, args.models_dir, qs, mcp_facts, mcp_times)
            wire_facts, wire_times = mcp_facts[MCP_REMEMBER_SAMPLES:], mcp_times[MCP_REMEMBER_SAMPLES:]
            result["mcp"]["wire"] = wire_phase(data_dir, args.models_dir, qs, wire_facts, wire_times)
        except Exception as err:
            log(f"  MCP phase failed: {type(err).__name__}: {err}")
            result["mcp"] = {"error": f"{type(err).__name__}: {err}"}
    if not args.keep:
        shutil.rmtree(data_dir, ignore_errors=True)
    return result
