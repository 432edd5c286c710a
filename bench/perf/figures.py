"""Read a size's result: dotted-path lookup, ratios derived from it, the targets, number format."""

from __future__ import annotations

from typing import Any

# Targets at the largest size (2 cores, 100k facts, warm). Key -> (limit, unit).
TARGETS: dict[str, tuple[float, str]] = {
    "search_graph.p50": (20.0, "ms"),
    "search_graph.p95": (50.0, "ms"),
    "recall_graph.p95": (80.0, "ms"),
    "remember.p50": (15.0, "ms"),
    "remember.p95": (40.0, "ms"),
    "cold_start_s": (2.0, "s"),
    "server_peak_rss_mb": (500.0, "MB"),
    "disk_bytes_per_fact": (4096.0, "B"),
}
GROWTH_TARGET = 1.5
BULK_TARGET = 0.8


def fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if unit == "B":
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def get(d: dict[str, Any] | None, path: str) -> Any:
    cur: Any = d
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def ratio(a: Any, b: Any) -> float | None:
    if a is None or b is None or not b:
        return None
    return float(a) / float(b)


def derived(r: dict[str, Any]) -> dict[str, Any]:
    """Ratio rows and single figures computed from one size's result."""
    floor_p50 = get(r, "floor.floor_pipeline.p50")
    floor_p95 = get(r, "floor.floor_pipeline.p95")
    return {
        "ratio_search_p50": ratio(get(r, "search_graph.p50"), floor_p50),
        "ratio_search_p95": ratio(get(r, "search_graph.p95"), floor_p95),
        "ratio_search_nograph_p50": ratio(get(r, "search_nograph.p50"), floor_p50),
        "ratio_recall_p50": ratio(get(r, "recall_graph.p50"), floor_p50),
        "ratio_recall_p95": ratio(get(r, "recall_graph.p95"), floor_p95),
        "ratio_search_vs_numpy_p50": ratio(get(r, "search_graph.p50"), get(r, "floor.numpy_pipeline.p50")),
        "ratio_remember_p50_vs_embed": ratio(get(r, "remember.p50"), get(r, "floor.embed_one.p50")),
        "ratio_wire_remember_p50": ratio(get(r, "mcp.wire.remember.p50"), get(r, "floor.embed_one.p50")),
        "ratio_wire_search_p50": ratio(get(r, "mcp.wire.search.p50"), floor_p50),
        "cold_start_s": get(r, "mcp.cold_start_s"),
        "cold_floor_s": get(r, "mcp.cold_floor_s"),
        "ratio_cold_start": ratio(get(r, "mcp.cold_start_s"), get(r, "mcp.cold_floor_s")),
        "initialize_s": get(r, "mcp.initialize_s"),
        "server_peak_rss_mb": get(r, "mcp.server_peak_rss_mb"),
        "worker_peak_rss_mb": get(r, "worker_peak_rss_mb"),
        "disk_bytes_per_fact": get(r, "disk.bytes_per_fact"),
        "disk_vectors_per_fact": get(r, "disk.vectors_bytes_per_fact"),
        "build_facts_per_s": get(r, "build.facts_per_s"),
        "reopen_s": get(r, "reopen_s"),
    }
