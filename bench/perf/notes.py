"""Explain a run in words: notes on each size and the peers, and what bounds each missed target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.perf.figures import TARGETS, derived, fmt, get, ratio, size_label


def notes_for(results: list[dict[str, Any]], peers: dict[str, Any] | None, meta: dict[str, Any]) -> list[str]:
    notes = []
    for r in results:
        b = r.get("build", {})
        label = size_label(r["size"])
        if b.get("route") == "import":
            notes.append(
                f"{label}: built by import (`transfer.restore`, bench/perf/bulk.py) in {b.get('seconds')} s: "
                f"{b.get('facts_stored', 0):,} facts stored, {b.get('restatements', 0):,} restatements "
                f"counted as corroborations, {b.get('edges', 0):,} edges, the 20 largest entities "
                f"holding {b.get('top20_about_share', 0):.0%} of the ABOUT edges; "
                f"{b.get('vectors_cached', 0):,} vectors the model computed in earlier runs "
                f"(--vector-cache) and {b.get('vectors_embedded', 0):,} embedded now. Every latency "
                "figure uses the model itself."
            )
        elif b:
            notes.append(
                f"{label}: built by `Memory.remember_many` ({b.get('facts_per_s')} facts/s, "
                f"{b.get('remember_seconds')} s in remember_many, {b.get('link_seconds')} s in link); "
                f"model alone {get(r, 'embed_batch.texts_per_s_before_build')} texts/s before the build, "
                f"{get(r, 'embed_batch.texts_per_s_after_build')} after."
            )
        st = r.get("stats", {})
        if st:
            notes.append(
                f"{label}: store holds {st.get('facts', '?')} facts, {st.get('entities', '?')} entities, "
                f"by status {st.get('by_status')}; indexed {st.get('indexed_facts')}."
            )
        d = r.get("disk") or {}
        if d:
            notes.append(
                f"{label}: disk {d['bytes_per_fact']:,.0f} B/fact = graph and its index "
                f"{d['graph_bytes_per_fact']:,.0f} + "
                f"LanceDB {d['vectors_bytes_per_fact']:,.0f} (+ access log etc.), {d['facts']} facts, "
                f"{d['vector_versions']} LanceDB version files kept; apparent size {d['apparent_bytes']:,} B."
            )
        rss = get(r, "mcp.server_rss_mb") or {}
        if rss:
            steps = ", ".join(
                f"{step.replace('_', ' ')} {v.get('now')} MB (peak {v.get('peak')}; "
                f"anonymous {v.get('anon')}, files {v.get('files')}, shared with other processes "
                f"{v.get('shared')})"
                for step, v in rss.items()
                if v
            )
            notes.append(f"{label}: server RSS {steps}.")
        for phase, count in (r.get("degraded") or {}).items():
            n = get(r, f"{phase}.n")
            notes.append(
                f"{label}: **{count} of {n} {phase.replace('_', ' ')} calls answered degraded** "
                "(a note said something failed, e.g. graph expansion): their latency is not the full path."
            )
        if get(r, "mcp.search_degraded"):
            said = "; ".join(get(r, "mcp.degraded_notes") or [])
            notes.append(
                f"{label}: **{get(r, 'mcp.search_degraded')} of {get(r, 'mcp.search.n')} MCP search calls "
                f"answered degraded** (the server said: {said or '?'})."
            )
        if get(r, "mcp.error"):
            notes.append(f"{label}: MCP phase failed: {get(r, 'mcp.error')}")
    for name, peer in (peers or {}).items():
        if peer.get("skipped"):
            notes.append(f"Peer {name} not run: {peer['skipped']}")
        for note in peer.get("notes", []):
            notes.append(f"Peer {name}: {note}")
    code, code_end = meta.get("code") or {}, meta.get("code_end") or {}
    notes.append(
        f"Code: commit {code.get('commit')}"
        + (f", uncommitted changes in {', '.join(code['server_dirty'])}" if code.get("server_dirty") else "")
        + (
            f"; **server code changed during the run** (ended at {code_end.get('commit')}, "
            f"dirty: {code_end.get('server_dirty')}): sizes may have run different code"
            if code_end and code_end != code
            else ""
        )
        + "."
    )
    notes.append(
        f"Machine: {meta['cpus']} CPUs, load average {meta['load_start']} at start, "
        f"{meta['load_end']} at end (1, 5, 15 min); CPU pressure (PSI some, avg60) "
        f"{meta.get('cpu_pressure_start')} at start, {meta.get('cpu_pressure_end')} at end. Other processes "
        "share these cores, so absolute figures are inflated and noisy; the floor and the ratios were "
        "measured in the same process at the same time."
    )
    return notes


def _top_stages(path: Mapping[str, Any] | None, n: int = 4) -> str:
    if not path:
        return "no stage timings (run with --profile)"
    parts = [
        f"{label} {v['ms_per_call']:.1f} ms"
        + (f" ({v['calls_per_call']:g} calls)" if v["calls_per_call"] != 1 else "")
        for label, v in list(path["stages"].items())[:n]
    ]
    return f"{path['ms_per_call']:.1f} ms per call with stage timers on: " + ", ".join(parts)


def bounds_for(r: dict[str, Any], smaller: dict[str, Any] | None) -> list[str]:
    """For each missed target at the largest size: what the same run measured that bounds it."""
    label = size_label(r["size"])
    stages = r.get("stages") or {}
    iso = r.get("isolated") or {}
    floor_embed, floor_lance = get(r, "floor.embed_one.p50"), get(r, "floor.lance_bare.p50")
    lines: list[str] = []

    def missed(key: str) -> bool:
        value = derived(r).get(key, get(r, key))
        return value is not None and value > TARGETS[key][0]

    if missed("search_graph.p50") or missed("search_graph.p95"):
        lines.append(
            f"**search** ({label}, p50 {fmt(get(r, 'search_graph.p50'))} ms vs 20): the floor pipeline is "
            f"{fmt(get(r, 'floor.floor_pipeline.p50'))} ms (embed one query {fmt(floor_embed)} + one bare "
            f"LanceDB top-10 {fmt(floor_lance)}); LanceDB as search calls it (k=40, filter) "
            f"{fmt(get(r, 'floor.lance_as_ours.p50'))} ms. Search makes two LanceDB queries after the "
            f"embedding: vector (its top 120 instead of 40 when the query names a known entity, for "
            f"the entity channel) and BM25. "
            f"Stages: {_top_stages(stages.get('search (graph on)'))}."
        )
    if missed("recall_graph.p95"):
        lines.append(
            f"**recall** ({label}, p95 {fmt(get(r, 'recall_graph.p95'))} ms vs 80): search plus the "
            "narrative. "
            f"Stages: {_top_stages(stages.get('recall (graph on)'))}."
        )
    if missed("remember.p50") or missed("remember.p95"):
        lines.append(
            f"**remember** ({label}, p50 {fmt(get(r, 'remember.p50'))} / "
            f"p95 {fmt(get(r, 'remember.p95'))} ms "
            f"vs 15 / 40): embedding the fact alone is {fmt(floor_embed)} ms (p50). "
            f"Stages: {_top_stages(stages.get('remember'), 6)}."
        )
    if missed("cold_start_s"):
        lines.append(
            f"**cold start** ({label}, {fmt(get(r, 'mcp.cold_start_s'))} s vs 2): starting Python and "
            f"importing the server's modules (LanceDB, MCP, fastembed) takes "
            f"{fmt(iso.get('python_and_imports_s'))} s alone; opening the store in-process "
            f"{fmt(r.get('reopen_s'))} s (the graph, its index, LanceDB tables; the model loads "
            "beside them). The server answers MCP initialize before its stores open (they open in "
            f"the background): spawn to initialize {fmt(get(r, 'mcp.initialize_s'))} s."
        )
    if missed("disk_bytes_per_fact"):
        d = r.get("disk") or {}
        lines.append(
            f"**disk** ({label}, {fmt(d.get('bytes_per_fact'))} B/fact vs 4,096): the graph and its index "
            f"{fmt(d.get('graph_bytes_per_fact'))} + LanceDB {fmt(d.get('vectors_bytes_per_fact'))} B/fact. "
            "LanceDB holds each fact's vector (half precision: 768 B at 384 dimensions), its text and "
            "filter columns, and the ANN index (IVF-RQ: 1-bit codes, ~65 B a row)."
        )
    if missed("server_peak_rss_mb"):
        rss = get(r, "mcp.server_rss_mb") or {}
        steps = ", ".join(f"{k.replace('_', ' ')} {v.get('peak')} MB" for k, v in rss.items() if v)
        lines.append(
            f"**peak RSS** ({label}, {fmt(get(r, 'mcp.server_peak_rss_mb'))} MB vs 500): a process that only "
            f"loads the embedding model and embeds one text peaks at "
            f"{fmt(iso.get('model_only_peak_rss_mb'))} MB (onnxruntime). "
            f"The server: {steps or '?'}. The rest is the fact cache (memory for speed), "
            "the graph's page cache and its index's, and LanceDB's index cache."
        )
    if smaller is not None:
        for key, name in (("search_graph.p50", "search p50"), ("remember.p50", "remember p50")):
            a, b = get(smaller, key), get(r, key)
            lance_a, lance_b = get(smaller, "floor.lance_as_ours.p50"), get(r, "floor.lance_as_ours.p50")
            if a and b and b / a > 1.5:
                lines.append(
                    f"**growth of {name}** {size_label(smaller['size'])}→{label}: {b / a:.2f}x; LanceDB as "
                    f"search calls it grew {fmt(ratio(lance_b, lance_a))}x in the same run."
                )
    return lines
