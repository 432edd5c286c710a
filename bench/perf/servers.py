"""Time hippograph's MCP server from outside, as a client: cold starts, tool calls, its RSS."""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.perf.measure import log, pct, vm_status
from bench.perf.workload import GenFact, Query, remember_kwargs
from testkit.client import call_tool, stdio_session
from testkit.wire import WireSession

MCP_REMEMBER_SAMPLES = 200
MCP_SEARCH_SAMPLES = 50
WIRE_REMEMBER_SAMPLES = 100
# A server started afresh settles first: its start-up jobs (a fold, an index build) and the
# hand-back of the library pages read while starting, two 10 s ticks after its first answered
# call (``Memory._settle_after_start``); timed within those, a 5k search took 34-41 ms on the
# wire against ~16 on a settled server (2026-12-01).
WIRE_SETTLE_S = 25.0
COLD_STARTS = 3
# The cold start's floor: a fresh Python that loads the same embedding model and embeds one text.
_COLD_FLOOR = """
import sys
from pathlib import Path
from hippograph.store.embed import FastEmbedder
from hippograph.config import DEFAULT_MODEL
FastEmbedder(DEFAULT_MODEL, Path(sys.argv[1])).embed(["what did we decide about the release?"])
"""


def cold_floor_s(models_dir: Path) -> float:
    """Median seconds, spawn to exit, of COLD_STARTS fresh Pythons that embed one text."""
    runs = []
    for _ in range(COLD_STARTS):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _COLD_FLOOR, str(models_dir)], check=True, capture_output=True)
        runs.append(time.perf_counter() - t0)
    return round(statistics.median(runs), 3)


def child_pid(match: Callable[[str], bool]) -> int | None:
    """The first child process of this one (any depth) whose command line ``match``es, via psutil."""
    try:
        import psutil
    except ImportError:
        return None
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(Exception):
            if match(" ".join(child.cmdline())):
                return int(child.pid)
    return None


async def mcp_phase(
    data_dir: Path, models_dir: Path, qs: Sequence[Query], extra: Sequence[GenFact], times: Sequence[str]
) -> dict[str, Any]:
    """Start ``hippograph serve`` over stdio COLD_STARTS times; the last session also times tool calls."""
    cold: list[dict[str, float]] = []
    out: dict[str, Any] = {}
    errlog_path = data_dir.parent / f"server-{data_dir.name}.log"
    with errlog_path.open("a") as errlog:
        for k in range(COLD_STARTS):
            last = k == COLD_STARTS - 1
            t0 = time.perf_counter()
            async with stdio_session(data_dir, models_dir, errlog=errlog, timeout=120) as session:
                t_init = time.perf_counter() - t0
                await call_tool(session, "search", {"query": qs[k % len(qs)].text, "limit": 10})
                t_first = time.perf_counter() - t0
                cold.append({"initialize_s": round(t_init, 3), "first_search_s": round(t_first, 3)})
                log(f"  cold start {k + 1}: initialize {t_init:.2f} s, first search answered {t_first:.2f} s")
                if last:
                    pid = child_pid(lambda cmd: "hippograph" in cmd and "serve" in cmd)
                    rss: dict[str, Any] = {"after_first_search": vm_status(pid)}
                    remember_ms = []
                    t_remembers = time.perf_counter()
                    for fact, when in zip(extra[:MCP_REMEMBER_SAMPLES], times, strict=False):
                        kwargs = {k2: v for k2, v in remember_kwargs(fact, when).items() if v is not None}
                        t1 = time.perf_counter()
                        await call_tool(session, "remember", {"content": fact.content, **kwargs})
                        remember_ms.append((time.perf_counter() - t1) * 1000)
                        if len(remember_ms) >= 30 and time.perf_counter() - t_remembers > 90:
                            break
                    rss["after_remembers"] = vm_status(pid)
                    search_ms = []
                    degraded = 0
                    t_searches = time.perf_counter()
                    for q in qs[:MCP_SEARCH_SAMPLES]:
                        t1 = time.perf_counter()
                        answer = await call_tool(session, "search", {"query": q.text, "limit": 10})
                        search_ms.append((time.perf_counter() - t1) * 1000)
                        notes = (answer.structured_content or {}).get("notes") or []
                        bad = [str(n) for n in notes if "fail" in str(n)]
                        degraded += bool(bad)
                        if bad:
                            out.setdefault("degraded_notes", sorted({*out.get("degraded_notes", []), *bad}))
                        if len(search_ms) >= 10 and time.perf_counter() - t_searches > 30:
                            break
                    out["remember"] = pct(remember_ms)
                    out["search"] = pct(search_ms)
                    out["search_degraded"] = degraded
                    out["server_pid_found"] = pid is not None
                    rss["after_searches"] = vm_status(pid)
                    out["server_rss_mb"] = rss
                    out["server_peak_rss_mb"] = (rss["after_searches"] or {}).get("peak")
    out["cold_starts"] = cold
    out["cold_floor_s"] = cold_floor_s(models_dir)
    log(f"  cold start floor (fresh Python, model loaded, one text embedded): {out['cold_floor_s']:.2f} s")
    out["cold_start_s"] = round(statistics.median(c["first_search_s"] for c in cold), 3)
    out["initialize_s"] = round(statistics.median(c["initialize_s"] for c in cold), 3)
    return out


def wire_phase(
    data_dir: Path, models_dir: Path, qs: Sequence[Query], extra: Sequence[GenFact], times: Sequence[str]
) -> dict[str, Any]:
    """Time remember and search as the server answers them on the wire (``testkit.wire``: JSON-RPC
    over stdio, no client SDK), in a server started afresh on the data dir after the SDK phase:
    ten searches, a pause while it settles (``WIRE_SETTLE_S``), then the timed calls."""
    errlog_path = data_dir.parent / f"server-{data_dir.name}.log"
    with errlog_path.open("a") as errlog, WireSession(data_dir, models_dir, errlog=errlog) as wire:
        for q in qs[:10]:
            wire.call("search", {"query": q.text, "limit": 10})
        time.sleep(WIRE_SETTLE_S)
        remember_ms = []
        for fact, when in zip(extra[:WIRE_REMEMBER_SAMPLES], times, strict=False):
            kwargs = {k: v for k, v in remember_kwargs(fact, when).items() if v is not None}
            t1 = time.perf_counter()
            wire.call("remember", {"content": fact.content, **kwargs})
            remember_ms.append((time.perf_counter() - t1) * 1000)
        search_ms = []
        for q in qs[10 : 10 + MCP_SEARCH_SAMPLES]:
            t1 = time.perf_counter()
            wire.call("search", {"query": q.text, "limit": 10})
            search_ms.append((time.perf_counter() - t1) * 1000)
    out = {"remember": pct(remember_ms), "search": pct(search_ms)}
    log(f"  on the wire: remember p50 {out['remember']['p50']} ms, search p50 {out['search']['p50']} ms")
    return out
