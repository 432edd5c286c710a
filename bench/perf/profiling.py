"""Where the time goes at the largest size: stage timers, pyinstrument, and costs measured alone."""

from __future__ import annotations

import contextlib
import io
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.perf.workload import GenFact, Query, remember_kwargs
from hippograph.store.index_view import IndexView


@contextlib.contextmanager
def stage_timer(memory: Any) -> Iterator[dict[str, list[float]]]:
    """Wrap the store methods search/recall/remember call, to time each stage (bench-side only)."""
    stages: dict[str, list[float]] = {}
    patched: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                stages.setdefault(label, []).append((time.perf_counter() - t0) * 1000)

        setattr(owner, attr, timed_call)
        patched.append((owner, attr, original))

    vectors, graph, retriever = memory.vectors, memory.graph, memory.retriever
    for owner, attr, label in (
        (memory.embedder, "embed", "embedder.embed"),
        (vectors, "vector_search", "vectors.vector_search"),
        (vectors, "text_search", "vectors.text_search"),
        (vectors, "start_text_search", "vectors.start_text_search (begun, its wait not timed)"),
        (retriever, "_visible", "retriever._visible (graph: allowed ids)"),
        (vectors, "add", "vectors.add"),
        (vectors, "set_status", "vectors.set_status"),
        (retriever, "anchors", "retriever.anchors"),
        (retriever, "expand", "retriever.expand (graph walk)"),
        (IndexView, "fact_edges", "graph.view.fact_edges"),
        (IndexView, "about_edges", "graph.view.about_edges"),
        (IndexView, "tag_neighbours", "graph.view.tag_neighbours"),
        (IndexView, "facts_about", "graph.view.facts_about"),
        (IndexView, "entity_relations", "graph.view.entity_relations"),
        (graph, "get_facts", "graph.get_facts"),
        (IndexView, "entity_names_for", "graph.view.entity_names_for"),
        (graph, "active_facts_with", "graph.active_facts_with (conflicts)"),
        (graph.read, "last_facts_in_sessions", "graph.read.last_facts_in_sessions"),
        (graph, "insert_facts", "graph.insert_facts"),
        (graph, "insert_entities", "graph.insert_entities"),
        (graph, "touch_entities", "graph.touch_entities"),
        (graph, "link_about_many", "graph.link_about_many"),
        (graph, "link_entities_many", "graph.link_entities_many"),
        (graph, "tag_facts", "graph.tag_facts"),
        (graph, "link_facts_many", "graph.link_facts_many"),
        (graph, "update_fact_states", "graph.update_fact_states"),
    ):
        if hasattr(owner, attr):
            wrap(owner, attr, label)
    try:
        yield stages
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)


def stage_report(title: str, stages: dict[str, list[float]], calls: int, total_ms: float) -> str:
    lines = [f"### {title}: {calls} calls, {total_ms / calls:.1f} ms per call (wall, stage timers on)", ""]
    lines.append(f"{'stage':<44}{'ms/call':>9}{'share':>8}{'calls/call':>12}{'p95 ms/stage':>14}")
    for label, values in sorted(stages.items(), key=lambda kv: -sum(kv[1])):
        per_call = sum(values) / calls
        share = 100.0 * sum(values) / total_ms if total_ms else 0.0
        p95 = float(np.percentile(values, 95))
        lines.append(f"{label:<44}{per_call:>9.2f}{share:>7.1f}%{len(values) / calls:>12.1f}{p95:>14.2f}")
    lines.append("(nested stages overlap: retriever.expand includes the graph.* calls it makes)")
    return "\n".join(lines)


def profile_paths(
    memory: Any, qs: Sequence[Query], extra: Sequence[GenFact], times: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    """Stage timers, then pyinstrument, over search, recall and remember at this size.

    Returns the report and, per path, its ms per call and each stage's ms per call.
    """
    out = io.StringIO()
    summary: dict[str, Any] = {}
    runs: list[tuple[str, Callable[[Any], Any], Sequence[Any]]] = [
        ("search (graph on)", lambda q: memory.search(q.text, limit=10), qs),
        ("recall (graph on)", lambda q: memory.recall(q.text, budget_tokens=1000), qs),
        (
            "remember",
            lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])),
            list(zip(extra[: len(extra) // 2], times, strict=False)),
        ),
    ]
    for title, fn, items in runs:
        with stage_timer(memory) as stages:
            t0 = time.perf_counter()
            for item in items:
                fn(item)
            total = (time.perf_counter() - t0) * 1000
        out.write(stage_report(title, stages, len(items), total) + "\n\n")
        summary[title] = {
            "ms_per_call": round(total / len(items), 2),
            "stages": {
                label: {
                    "ms_per_call": round(sum(v) / len(items), 2),
                    "calls_per_call": round(len(v) / len(items), 1),
                }
                for label, v in sorted(stages.items(), key=lambda kv: -sum(kv[1]))
            },
        }
    try:
        from pyinstrument import Profiler
    except ImportError:
        out.write("pyinstrument is not installed: pip install pyinstrument for the call-tree profile\n")
        return out.getvalue(), summary
    prof_runs = [
        ("search (graph on)", lambda q: memory.search(q.text, limit=10), qs),
        ("recall (graph on)", lambda q: memory.recall(q.text, budget_tokens=1000), qs),
        (
            "remember",
            lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])),
            list(zip(extra[len(extra) // 2 :], times[len(extra) // 2 :], strict=True)),
        ),
    ]
    for title, fn, items in prof_runs:
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for item in items:
            fn(item)
        profiler.stop()
        text = profiler.output_text(unicode=False, color=False, show_all=False, short_mode=False)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        out.write(f"### pyinstrument: {title}, {len(items)} calls\n\n" + "\n".join(lines[:90]) + "\n\n")
    return out.getvalue(), summary


_IMPORTS = "import hippograph.sharing.proxy, hippograph.mcp_app, fastembed, lancedb"
_MODEL_ONLY = """
import os, sys
from pathlib import Path
from hippograph.config import DEFAULT_MODEL
from hippograph.store.embed import FastEmbedder
FastEmbedder(DEFAULT_MODEL, Path(sys.argv[1])).embed(["one query"])
print([int(l.split()[1]) // 1024 for l in open(f"/proc/{os.getpid()}/status") if l.startswith("VmHWM")][0])
"""


def isolated_costs(models_dir: Path) -> dict[str, Any]:
    """What parts cost alone, each in a fresh interpreter: importing the server's modules (the
    floor of a cold start), and the peak RSS of a process that only loads the model and embeds."""
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _IMPORTS], check=True, capture_output=True)
        seconds.append(time.perf_counter() - t0)
    model = subprocess.run(
        [sys.executable, "-c", _MODEL_ONLY, str(models_dir)], check=True, capture_output=True, text=True
    )
    return {
        "python_and_imports_s": round(statistics.median(seconds), 2),
        "model_only_peak_rss_mb": int(model.stdout.strip().splitlines()[-1]),
    }
