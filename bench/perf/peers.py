"""The peers of ``bench.perf``: the same facts and questions, through other memory systems.

- **server-memory**, the reference MCP memory server (npm ``@modelcontextprotocol/server-memory``),
  started with ``npx -y`` over stdio, its JSONL file in a temp dir (``MEMORY_FILE_PATH``).
  Each fact becomes an observation of its first entity (entities made with
  ``create_entities``, typed person/project/place/tool/topic). The store is fed in batches
  of 200 facts per ``add_observations`` call (the build), then timed: ``add_observations``
  with one fact (its equivalent of remember) and ``search_nodes`` with the question's key
  entity or word (it matches substrings of names, types and observations, so a whole
  question would match nothing). Every call of that server reads, and every write
  rewrites, the whole JSONL file.
- **kuzu-memory** (PyPI), in its own venv (created with pip when missing, since it pins
  its own kuzu), driven through its Python API by ``kuzu_worker.py`` (beside this file) run as
  a script there: ``KuzuMemory.remember`` for each fact (the build and the remember samples) and
  ``attach_memories(question, max_memories=10)`` (its recall; keyword/entity strategy, no
  model), git sync off.

Stores grow cumulatively through the sizes; a size whose feed would not fit the time left
is not run and says why. Each peer runs under a time limit and never fails the bench: a
peer that cannot install or run is reported with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from bench.perf import kuzu_worker
from bench.perf.measure import log, pct
from bench.perf.workload import corpus, entity_types, queries
from testkit.client import call_tool, connect_stdio

SEARCH_SAMPLES = 100
REMEMBER_SAMPLES = 50
FEED_BATCH = 200
PHASE_SECONDS = 30.0  # a timing phase stops past this once it has its minimum samples


def _reason(err: BaseException) -> str:
    """The innermost error of an exception group (anyio task groups wrap them), as one line."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {str(err)[:300]}"


def _log(message: str) -> None:
    log(message, "perf peers")


# ----------------------------------------------------------------- server-memory (npm, over MCP)


async def _create_entities(session: Any, names: list[str], types: dict[str, str]) -> None:
    """The reference server's create_entities, 500 names a call."""
    for start in range(0, len(names), 500):
        chunk = names[start : start + 500]
        entities = [{"name": n, "entityType": types.get(n, "thing"), "observations": []} for n in chunk]
        await call_tool(session, "create_entities", {"entities": entities})


async def _server_memory(
    sizes: list[int],
    facts: list[Any],
    extra: list[Any],
    qs: list[Any],
    work: Path,
    deadline: float,
    seed: int,
) -> dict[str, Any]:
    npx = shutil.which("npx")
    if npx is None:
        return {"skipped": "npx is not on PATH (Node.js is needed for the reference server)"}
    work.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(work)),
        "MEMORY_FILE_PATH": str(work / "memory.jsonl"),
    }
    types = entity_types(seed)
    out: dict[str, Any] = {"sizes": {}, "notes": []}
    errlog = (work / "server-memory.log").open("a")
    t0 = time.perf_counter()
    try:
        with anyio.fail_after(max(10.0, deadline - time.monotonic())):
            async with connect_stdio(
                npx, ["-y", "@modelcontextprotocol/server-memory"], env, errlog=errlog, timeout=120
            ) as session:
                out["start_s"] = round(time.perf_counter() - t0, 2)
                tools = {tool.name for tool in (await session.list_tools()).tools}
                needed = {"create_entities", "add_observations", "search_nodes"}
                if not needed <= tools:
                    return {"skipped": f"its tools are {sorted(tools)}, not {sorted(needed)}"}
                out["tools"] = sorted(tools)
                created: set[str] = set()
                fed = 0
                feed_rate: float | None = None
                for idx, size in enumerate(sizes):
                    remaining = deadline - time.monotonic()
                    if feed_rate is not None:
                        # Writes rewrite the whole file, so the cost per fact grows with the store.
                        predicted = (size - fed) / feed_rate * (size / max(fed, 1)) ** 0.5 + 30
                        if predicted > remaining:
                            note = f"not run: feeding {size - fed} more facts needs ~{predicted:.0f} s"
                            out["sizes"][str(size)] = {"note": note}
                            out["notes"].append(f"{size} facts {note}, {remaining:.0f} s left")
                            break
                    t_feed = time.perf_counter()
                    batch_facts = facts[fed:size]
                    new_entities = sorted({e for f in batch_facts for e in f.entities} - created)
                    await _create_entities(session, new_entities, types)
                    created.update(new_entities)
                    for s in range(0, len(batch_facts), FEED_BATCH):
                        grouped: dict[str, list[str]] = {}
                        for f in batch_facts[s : s + FEED_BATCH]:
                            grouped.setdefault(f.entities[0], []).append(f.content)
                        await call_tool(
                            session,
                            "add_observations",
                            {"observations": [{"entityName": k, "contents": v} for k, v in grouped.items()]},
                        )
                    feed_s = time.perf_counter() - t_feed
                    feed_rate = len(batch_facts) / feed_s if feed_s else None
                    fed = size
                    _log(f"server-memory: fed {size} facts ({feed_rate or 0:.0f} facts/s in batches)")
                    search_ms = []
                    per_size = len(qs) // len(sizes)
                    t_search = time.perf_counter()
                    for q in qs[idx * per_size : (idx + 1) * per_size]:
                        t1 = time.perf_counter()
                        await call_tool(session, "search_nodes", {"query": q.key})
                        search_ms.append((time.perf_counter() - t1) * 1000)
                        if len(search_ms) >= 20 and time.perf_counter() - t_search > PHASE_SECONDS:
                            break
                    samples = extra[idx * REMEMBER_SAMPLES : (idx + 1) * REMEMBER_SAMPLES]
                    missing = sorted({f.entities[0] for f in samples} - created)
                    if missing:  # not timed: remember creates entities too, but this tool cannot
                        await _create_entities(session, missing, types)
                        created.update(missing)
                    remember_ms = []
                    for f in samples:
                        t1 = time.perf_counter()
                        await call_tool(
                            session,
                            "add_observations",
                            {"observations": [{"entityName": f.entities[0], "contents": [f.content]}]},
                        )
                        remember_ms.append((time.perf_counter() - t1) * 1000)
                    out["sizes"][str(size)] = {
                        "search": pct(search_ms),
                        "remember": pct(remember_ms),
                        "feed_facts_per_s": round(feed_rate or 0.0, 1),
                        "file_bytes": (work / "memory.jsonl").stat().st_size,
                    }
                    _log(
                        f"server-memory at {size}: search_nodes p50 "
                        f"{out['sizes'][str(size)]['search'].get('p50')} ms, add_observations p50 "
                        f"{out['sizes'][str(size)]['remember'].get('p50')} ms"
                    )
    except TimeoutError:
        if not out["sizes"]:
            return {"skipped": "did not start or answer within its time limit (npx may be downloading)"}
        out["notes"].append("stopped at its time limit")
    except Exception as err:  # a peer must never fail the bench
        if not out["sizes"]:
            return {"skipped": _reason(err)}
        out["notes"].append(f"stopped: {_reason(err)}")
    finally:
        errlog.close()
    out["notes"].append(
        "search_nodes gets the question's key entity or word (substring match only); it returns "
        "every matching entity with all its observations"
    )
    return out


# ----------------------------------------------------------------- kuzu-memory (PyPI, own venv)


def _ensure_venv(venv: Path, deadline: float) -> tuple[Path | None, str | None]:
    python = venv / "bin" / "python"

    def importable() -> bool:
        probe = subprocess.run(
            [str(python), "-c", "import kuzu_memory"], capture_output=True, timeout=120, check=False
        )
        return probe.returncode == 0

    try:
        if python.exists() and importable():
            return python, None
        _log(f"kuzu-memory: creating {venv} and installing kuzu-memory with pip")
        if not python.exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120
            )
        limit = max(30.0, deadline - time.monotonic() - 60)
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "kuzu-memory"],
            capture_output=True,
            text=True,
            timeout=limit,
            check=False,
        )
        if pip.returncode != 0:
            tail = " ".join(pip.stderr.strip().splitlines()[-3:])[:300]
            return None, f"pip install kuzu-memory failed: {tail}"
        if not importable():
            return None, "kuzu-memory installed but does not import"
        return python, None
    except subprocess.TimeoutExpired:
        return None, "installing kuzu-memory did not finish within its time limit"
    except (OSError, subprocess.CalledProcessError) as err:
        return None, f"could not make its venv: {err}"


def _kuzu_memory(
    sizes: list[int],
    facts: list[Any],
    extra: list[Any],
    qs: list[Any],
    work: Path,
    deadline: float,
    venv: Path,
) -> dict[str, Any]:
    python, reason = _ensure_venv(venv, deadline)
    if python is None:
        return {"skipped": reason}
    work.mkdir(parents=True, exist_ok=True)
    payload = {
        "sizes": sizes,
        "facts": [[f.content, f.session_id] for f in facts],
        "extra": [[f.content, f.session_id] for f in extra],
        "queries": [q.text for q in qs],
        "deadline_s": max(10.0, deadline - time.monotonic() - 15),
        "remember_samples": REMEMBER_SAMPLES,
        "phase_seconds": PHASE_SECONDS,
    }
    (work / "input.json").write_text(json.dumps(payload))
    result_path = work / "result.json"
    cmd = [str(python), str(Path(kuzu_worker.__file__).resolve()), str(work / "input.json"), str(result_path)]
    try:
        with (work / "kuzu-memory.log").open("w") as errlog:
            proc = subprocess.run(
                cmd,
                cwd=work,
                stdout=errlog,
                stderr=errlog,
                timeout=max(20.0, deadline - time.monotonic()),
                check=False,
                env={**os.environ, "HOME": str(work), "KUZU_MEMORY_DISABLE_GIT_SYNC": "1"},
            )
    except subprocess.TimeoutExpired:
        if result_path.exists():
            out = _with_percentiles(json.loads(result_path.read_text()))
            out.setdefault("notes", []).append("stopped at its time limit")
            return out
        return {"skipped": "did not finish its first size within its time limit"}
    if not result_path.exists():
        tail = " ".join((work / "kuzu-memory.log").read_text(errors="replace").strip().splitlines()[-3:])
        return {"skipped": f"its worker failed (exit {proc.returncode}): {tail[:300]}"}
    return _with_percentiles(json.loads(result_path.read_text()))


def _with_percentiles(out: dict[str, Any]) -> dict[str, Any]:
    """The worker's raw samples per size (``search_ms``, ``remember_ms``) as percentiles (``search``, ...)."""
    for size, figures in out.get("sizes", {}).items():
        out["sizes"][size] = {
            key.removesuffix("_ms"): pct(value) if key.endswith("_ms") else value
            for key, value in figures.items()
        }
    return out


# ----------------------------------------------------------------- entry point


def run_peers(
    *, sizes: list[int], seed: int, n_queries: int, work_dir: Path, time_limit: float, peer_venv: Path
) -> dict[str, Any]:
    """Both peers, each within its share of ``time_limit`` seconds; never raises."""
    largest = max(sizes)
    stream = corpus(largest + REMEMBER_SAMPLES * len(sizes), seed)
    facts, extra = stream[:largest], stream[largest:]
    # Distinct questions for each size: kuzu-memory caches recall answers (a repeat takes ~0.01 ms,
    # even after new writes), so repeating the questions of the previous size would flatter it.
    per_size = min(n_queries, SEARCH_SAMPLES)
    qs = queries(per_size * len(sizes), seed)
    results: dict[str, Any] = {}
    start = time.monotonic()
    half = start + time_limit / 2
    try:
        results["server-memory"] = anyio.run(
            _server_memory, sizes, facts, extra, qs, work_dir / "server-memory", half, seed
        )
    except Exception as err:  # a peer must never fail the bench
        results["server-memory"] = {"skipped": _reason(err)}
    _log(f"server-memory done in {time.monotonic() - start:.0f} s")
    try:
        results["kuzu-memory"] = _kuzu_memory(
            sizes, facts, extra, qs, work_dir / "kuzu-memory", start + time_limit, peer_venv
        )
    except Exception as err:
        results["kuzu-memory"] = {"skipped": _reason(err)}
    _log(f"peers done in {time.monotonic() - start:.0f} s")
    return results
