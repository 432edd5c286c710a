"""Write a run's report: the one table, the verdicts, perf.md, perf.json and the perf.png chart."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from bench.perf.figures import BULK_TARGET, GROWTH_TARGET, TARGETS, derived, fmt, get, ratio, size_label
from bench.perf.measure import log
from bench.perf.notes import bounds_for, notes_for

# (label, path in a size result, unit, target key or None, growth checked?)
ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("remember p50 (service)", "remember.p50", "ms", "remember.p50", True),
    ("remember p95 (service)", "remember.p95", "ms", "remember.p95", True),
    ("remember p99 (service)", "remember.p99", "ms", None, True),
    ("remember p50 (MCP tool, stdio)", "mcp.remember.p50", "ms", None, True),
    ("remember p95 (MCP tool, stdio)", "mcp.remember.p95", "ms", None, True),
    ("remember p99 (MCP tool, stdio)", "mcp.remember.p99", "ms", None, True),
    ("search p50, graph on", "search_graph.p50", "ms", "search_graph.p50", True),
    ("search p95, graph on", "search_graph.p95", "ms", "search_graph.p95", True),
    ("search p99, graph on", "search_graph.p99", "ms", None, True),
    ("search p50, graph off", "search_nograph.p50", "ms", None, True),
    ("search p95, graph off", "search_nograph.p95", "ms", None, True),
    ("search p99, graph off", "search_nograph.p99", "ms", None, True),
    ("search p50 (MCP tool, stdio)", "mcp.search.p50", "ms", None, True),
    ("remember p50 (MCP, on the wire: no client SDK)", "mcp.wire.remember.p50", "ms", None, True),
    ("search p50 (MCP, on the wire: no client SDK)", "mcp.wire.search.p50", "ms", None, True),
    ("recall p50, graph on", "recall_graph.p50", "ms", None, True),
    ("recall p95, graph on", "recall_graph.p95", "ms", "recall_graph.p95", True),
    ("recall p99, graph on", "recall_graph.p99", "ms", None, True),
    ("recall p50, graph off", "recall_nograph.p50", "ms", None, True),
    ("recall p95, graph off", "recall_nograph.p95", "ms", None, True),
    ("recall p99, graph off", "recall_nograph.p99", "ms", None, True),
    ("floor: embed one query p50", "floor.embed_one.p50", "ms", None, False),
    ("floor: embed one query p95", "floor.embed_one.p95", "ms", None, False),
    ("floor: bare LanceDB top-10 p50", "floor.lance_bare.p50", "ms", None, False),
    ("floor: bare LanceDB top-10 p95", "floor.lance_bare.p95", "ms", None, False),
    ("floor: numpy exact top-10 p50", "floor.numpy_topk.p50", "ms", None, False),
    ("floor: numpy exact top-10 p95", "floor.numpy_topk.p95", "ms", None, False),
    ("floor pipeline (embed + bare LanceDB) p50", "floor.floor_pipeline.p50", "ms", None, False),
    ("floor pipeline (embed + bare LanceDB) p95", "floor.floor_pipeline.p95", "ms", None, False),
    ("LanceDB as search calls it (k=40, cosine, filter) p50", "floor.lance_as_ours.p50", "ms", None, False),
]


EXTRA_ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("ratio: search p50 / floor pipeline p50", "ratio_search_p50", "x", None, False),
    ("ratio: search p95 / floor pipeline p95", "ratio_search_p95", "x", None, False),
    ("ratio: search (graph off) p50 / floor p50", "ratio_search_nograph_p50", "x", None, False),
    ("ratio: recall p50 / floor pipeline p50", "ratio_recall_p50", "x", None, False),
    ("ratio: recall p95 / floor pipeline p95", "ratio_recall_p95", "x", None, False),
    ("ratio: search p50 / (embed + numpy top-k) p50", "ratio_search_vs_numpy_p50", "x", None, False),
    ("ratio: remember p50 / embed one p50", "ratio_remember_p50_vs_embed", "x", None, False),
    ("ratio: MCP remember p50 (wire) / embed one p50", "ratio_wire_remember_p50", "x", None, False),
    ("ratio: MCP search p50 (wire) / floor pipeline p50", "ratio_wire_search_p50", "x", None, False),
    ("cold start to first answered search (s)", "cold_start_s", "s", "cold_start_s", True),
    ("  of which: spawn to MCP initialize (s)", "initialize_s", "s", None, False),
    ("cold start floor: fresh Python, model loaded, one text embedded (s)", "cold_floor_s", "s", None, False),
    ("ratio: cold start / its floor", "ratio_cold_start", "x", None, False),
    ("Memory.open of the built store, in-process (s)", "reopen_s", "s", None, False),
    ("peak RSS, server process (MB)", "server_peak_rss_mb", "MB", "server_peak_rss_mb", False),
    ("peak RSS, bench worker incl. corpus and floor (MB)", "worker_peak_rss_mb", "MB", None, False),
    ("disk bytes per fact (du, data dir)", "disk_bytes_per_fact", "B", "disk_bytes_per_fact", False),
    ("  of which LanceDB bytes per fact", "disk_vectors_per_fact", "B", None, False),
    ("bulk import (build by remember_many), facts/s", "build_facts_per_s", "/s", None, False),
]


def md_row(*cells: Any) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


PEER_TITLES = {
    ("server-memory", "remember"): "remember ≈ add_observations (1 fact)",
    ("server-memory", "search"): "search ≈ search_nodes (key term)",
    ("kuzu-memory", "remember"): "remember",
    ("kuzu-memory", "search"): "search ≈ attach_memories",
}


def table_markdown(results: list[dict[str, Any]], peers: dict[str, Any] | None) -> tuple[str, list[dict]]:
    """The one table: a row per metric, a column per size, growth, target and verdict."""
    sizes = [r["size"] for r in results]
    flat = [{**r, **derived(r)} for r in results]
    two = len(sizes) >= 2
    pairs = list(itertools.pairwise(range(len(sizes))))
    growth_heads = [f"x {size_label(sizes[a])}→{size_label(sizes[b])}" for a, b in pairs] or ["growth"]
    growth_head = growth_heads[-1]
    head = ["metric", *map(size_label, sizes), *growth_heads, f"target ({size_label(sizes[-1])})", "met?"]
    lines = [md_row(*head), "|" + "---|" * len(head)]
    verdicts: list[dict] = []
    blank = [""] * (len(sizes) + len(growth_heads) - 1)
    for label, path, unit, target_key, growth_checked in ROWS + EXTRA_ROWS:
        values = [get(r, path) for r in flat]
        if all(v is None for v in values):
            continue
        early = [ratio(values[b], values[a]) for a, b in pairs[:-1]]
        early_cells = [f"{g:.2f}x" if g is not None else "–" for g in early]
        growth = ratio(values[-1], values[-2]) if two else None
        growth_cell = "–"
        if growth is not None:
            growth_cell = f"{growth:.2f}x"
            if growth_checked and unit in ("ms", "s"):
                ok = growth <= GROWTH_TARGET
                growth_cell += " ✓" if ok else " ✗"
                verdicts.append(
                    {
                        "metric": f"growth {growth_head}: {label}",
                        "value": round(growth, 3),
                        "target": GROWTH_TARGET,
                        "met": ok,
                    }
                )
        target_cell = met_cell = ""
        if target_key:
            limit, t_unit = TARGETS[target_key]
            target_cell = f"<= {fmt(limit, t_unit)} {t_unit}"
            if values[-1] is not None:
                ok = values[-1] <= limit
                met_cell = "yes" if ok else f"**no** ({values[-1] / limit:.1f}x)"
                verdicts.append({"metric": label, "value": values[-1], "target": limit, "met": ok})
        cells = [fmt(v, unit) for v in values]
        lines.append(md_row(label, *cells, *early_cells, growth_cell, target_cell, met_cell))
    embed_rates = [get(r, "embed_batch.texts_per_s") for r in results]
    growth_blanks = [""] * len(growth_heads)
    if any(embed_rates):
        label = "floor: embedding model alone, calls of 64 texts (texts/s, mean of before/after the build)"
        lines.append(md_row(label, *(fmt(v) if v else "–" for v in embed_rates), *growth_blanks, "", ""))
    # Both sides from the same worker, so the machine's load weighs on them alike.
    shares = [ratio(get(r, "build.facts_per_s"), rate) for r, rate in zip(results, embed_rates, strict=True)]
    measured = [(size, share) for size, share in zip(sizes, shares, strict=True) if share is not None]
    if measured:
        at, share = measured[-1]
        ok = share >= BULK_TARGET
        verdict = "yes" if ok else f"**no** ({share:.0%})"
        label = "ratio: bulk import (remember_many facts/s) / model batch throughput"
        cells = [f"{v:.0%}" if v is not None else "–" for v in shares]
        lines.append(md_row(label, *cells, *growth_blanks, f">= {BULK_TARGET:.0%}", verdict))
        verdicts.append(
            {
                "metric": "bulk import / embedding batch throughput",
                "value": round(share, 3),
                "target": BULK_TARGET,
                "met": ok,
                "at_size": at,
            }
        )
    for key in ("server-memory", "kuzu-memory"):
        peer = (peers or {}).get(key)
        if peer is None:
            continue
        if peer.get("skipped"):
            lines.append(md_row(f"peer {key}: not run", peer["skipped"], *blank, "", ""))
            continue
        by_size = {int(k): v for k, v in (peer.get("sizes") or {}).items()}
        for op in ("search", "remember"):
            for stat in ("p50", "p95"):
                values = [get(by_size.get(s), f"{op}.{stat}") for s in sizes]
                if all(v is None for v in values):
                    continue
                growths = [ratio(values[b], values[a]) for a, b in pairs] or [None]
                cells = [
                    fmt(v, "ms") if v is not None else "not run (see notes)"
                    for s, v in zip(sizes, values, strict=True)
                ]
                label = f"peer {key}: {PEER_TITLES[(key, op)]} {stat} (ms)"
                growth_cells = [f"{g:.2f}x" if g else "–" for g in growths]
                lines.append(md_row(label, *cells, *growth_cells, "", ""))
    return "\n".join(lines), verdicts


def plot(results: list[dict[str, Any]], peers: dict[str, Any] | None, path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    sizes = [r["size"] for r in results]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=False)
    series = [
        ("search, graph on", "search_graph", "tab:blue"),
        ("search, graph off", "search_nograph", "tab:cyan"),
        ("recall, graph on", "recall_graph", "tab:green"),
        ("remember (service)", "remember", "tab:red"),
        ("remember (MCP)", "mcp.remember", "tab:orange"),
        ("floor: embed + bare LanceDB", "floor.floor_pipeline", "black"),
    ]
    for ax, stat in zip(axes, ("p50", "p95"), strict=True):
        for label, key, color in series:
            ys = [get(r, f"{key}.{stat}") for r in results]
            pts = [(s, y) for s, y in zip(sizes, ys, strict=True) if y is not None]
            if pts:
                style = "--" if key.startswith("floor") else "-"
                ax.plot(*zip(*pts, strict=True), style, marker="o", color=color, label=label)
        for name, key, color in (
            ("server-memory search", "server-memory", "tab:purple"),
            ("kuzu-memory search", "kuzu-memory", "tab:brown"),
        ):
            by_size = {int(k): v for k, v in ((peers or {}).get(key, {}).get("sizes") or {}).items()}
            pts = [(s, get(by_size.get(s), f"search.{stat}")) for s in sizes]
            pts = [(s, y) for s, y in pts if y is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), ":", marker="s", color=color, label=f"peer {name}")
        for target_key, color in (
            ("search_graph", "tab:blue"),
            ("recall_graph", "tab:green"),
            ("remember", "tab:red"),
        ):
            limit = TARGETS.get(f"{target_key}.{stat}")
            if limit:
                ax.axhline(limit[0], color=color, alpha=0.3, linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [size_label(s) for s in sizes])
        ax.set_xlabel("facts in the store")
        ax.set_ylabel(f"{stat} latency (ms)")
        ax.set_title(f"hippograph {stat} latency vs store size (faint lines: targets)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def write_report(
    out: Path,
    results: list[dict[str, Any]],
    peers: dict[str, Any] | None,
    meta: dict[str, Any],
    profile: bool,
) -> None:
    """perf.md (printed too), perf.json and perf.png in ``out``, from the finished sizes and the peers."""
    table, verdicts = table_markdown(results, peers)
    plot_note = plot(results, peers, out / "perf.png")
    notes = notes_for(results, peers, meta)
    if plot_note:
        notes.append(plot_note)
    missed = [v for v in verdicts if not v["met"]]
    ordered = sorted(results, key=lambda r: r["size"])
    md = [
        "# hippograph performance at scale",
        "",
        f"`{meta['command']}` — {meta['date']}, {meta['run_seconds']:.0f} s, Python {meta['python']}, "
        f"{meta['cpus']} CPUs, seed {meta['seed']}, {meta['queries']} queries per size.",
        "",
        table,
        "",
        f"Targets missed: {len(missed)} of {len(verdicts)}."
        + ("".join(f"\n- {v['metric']}: {fmt(v['value'])} vs {fmt(v['target'])}" for v in missed)),
        "",
        "## What bounds the missed targets (measured in this run)",
        "",
        *[f"- {line}" for line in bounds_for(ordered[-1], ordered[-2] if len(ordered) > 1 else None)],
        "",
        "## Notes",
        "",
        *[f"- {n}" for n in notes],
        "",
        "![latency vs store size](perf.png)",
        "",
    ]
    text = "\n".join(md)
    (out / "perf.md").write_text(text)
    payload = {"meta": meta, "results": results, "peers": peers, "verdicts": verdicts, "notes": notes}
    (out / "perf.json").write_text(json.dumps(payload, indent=2, default=str))
    print(text)
    log(f"written {out / 'perf.md'}, perf.json, perf.png" + (", perf_profile.txt" if profile else ""))
