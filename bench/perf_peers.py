"""Peers for ``bench.perf``: the same facts and questions, through other memory systems.

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
  its own kuzu), driven through its Python API by this file run as a script there:
  ``KuzuMemory.remember`` for each fact (the build and the remember samples) and
  ``attach_memories(question, max_memories=10)`` (its recall; keyword/entity strategy, no
  model), git sync off.

Stores grow cumulatively through the sizes; a size whose feed would not fit the time left
is not run and says why. Each peer runs under a time limit and never fails the bench: a
peer that cannot install or run is reported with the reason.

This file imports only the standard library at module level, so it runs in the peer venv.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SEARCH_SAMPLES = 100
REMEMBER_SAMPLES = 50
FEED_BATCH = 200
PHASE_SECONDS = 30.0  # a timing phase stops past this once it has its minimum samples


def _pct(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {}
    ordered = sorted(samples)

    def at(q: float) -> float:
        # Linear interpolation, as numpy.percentile does by default.
        pos = (len(ordered) - 1) * q
        lo = int(pos)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return {
        "p50": round(at(0.50), 3),
        "p95": round(at(0.95), 3),
        "p99": round(at(0.99), 3),
        "mean": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }


def _reason(err: BaseException) -> str:
    """The innermost error of an exception group (anyio task groups wrap them), as one line."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {str(err)[:300]}"


def _log(message: str) -> None:
    print(f"[perf peers {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------- server-memory (npm, over MCP)


def _entity_types(seed: int) -> dict[str, str]:
    from bench.perf import _TOOLS, _TOPICS, Vocabulary

    vocab = Vocabulary(seed)
    types = {name: "person" for name in vocab.people}
    types.update({name: "project" for name in vocab.projects})
    types.update({name: "place" for name in vocab.places})
    types.update({name: "tool" for name in _TOOLS})
    types.update({name: "topic" for name in _TOPICS})
    return types


async def _server_memory(
    sizes: list[int],
    facts: list[Any],
    extra: list[Any],
    qs: list[Any],
    work: Path,
    deadline: float,
    seed: int,
) -> dict[str, Any]:
    import anyio

    from bench.perf import call_tool, stdio_session

    npx = shutil.which("npx")
    if npx is None:
        return {"skipped": "npx is not on PATH (Node.js is needed for the reference server)"}
    work.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(work)),
        "MEMORY_FILE_PATH": str(work / "memory.jsonl"),
    }
    types = _entity_types(seed)
    out: dict[str, Any] = {"sizes": {}, "notes": []}
    errlog = (work / "server-memory.log").open("a")
    t0 = time.perf_counter()
    try:
        with anyio.fail_after(max(10.0, deadline - time.monotonic())):
            async with stdio_session(
                npx, ["-y", "@modelcontextprotocol/server-memory"], env, errlog
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
                    for s in range(0, len(new_entities), 500):
                        chunk = new_entities[s : s + 500]
                        await call_tool(
                            session,
                            "create_entities",
                            entities=[
                                {"name": n, "entityType": types.get(n, "thing"), "observations": []}
                                for n in chunk
                            ],
                        )
                    created.update(new_entities)
                    for s in range(0, len(batch_facts), FEED_BATCH):
                        grouped: dict[str, list[str]] = {}
                        for f in batch_facts[s : s + FEED_BATCH]:
                            grouped.setdefault(f.entities[0], []).append(f.content)
                        await call_tool(
                            session,
                            "add_observations",
                            observations=[{"entityName": k, "contents": v} for k, v in grouped.items()],
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
                        await call_tool(session, "search_nodes", query=q.key)
                        search_ms.append((time.perf_counter() - t1) * 1000)
                        if len(search_ms) >= 20 and time.perf_counter() - t_search > PHASE_SECONDS:
                            break
                    samples = extra[idx * REMEMBER_SAMPLES : (idx + 1) * REMEMBER_SAMPLES]
                    missing = sorted({f.entities[0] for f in samples} - created)
                    if missing:  # not timed: remember creates entities too, but this tool cannot
                        await call_tool(
                            session,
                            "create_entities",
                            entities=[
                                {"name": n, "entityType": types.get(n, "thing"), "observations": []}
                                for n in missing
                            ],
                        )
                        created.update(missing)
                    remember_ms = []
                    for f in samples:
                        t1 = time.perf_counter()
                        await call_tool(
                            session,
                            "add_observations",
                            observations=[{"entityName": f.entities[0], "contents": [f.content]}],
                        )
                        remember_ms.append((time.perf_counter() - t1) * 1000)
                    out["sizes"][str(size)] = {
                        "search": _pct(search_ms),
                        "remember": _pct(remember_ms),
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
    }
    (work / "input.json").write_text(json.dumps(payload))
    result_path = work / "result.json"
    cmd = [
        str(python),
        str(Path(__file__).resolve()),
        "kuzu-worker",
        str(work / "input.json"),
        str(result_path),
    ]
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
            out = json.loads(result_path.read_text())
            out.setdefault("notes", []).append("stopped at its time limit")
            return dict(out)
        return {"skipped": "did not finish its first size within its time limit"}
    if not result_path.exists():
        tail = " ".join((work / "kuzu-memory.log").read_text(errors="replace").strip().splitlines()[-3:])
        return {"skipped": f"its worker failed (exit {proc.returncode}): {tail[:300]}"}
    return dict(json.loads(result_path.read_text()))


def kuzu_worker(input_path: Path, result_path: Path) -> int:
    """Runs inside the peer venv: feed kuzu-memory, time remember and attach_memories."""
    import logging

    logging.disable(logging.CRITICAL)  # its background enrichment logs tracebacks
    started = time.monotonic()
    payload = json.loads(input_path.read_text())
    deadline = started + float(payload["deadline_s"])
    from datetime import datetime
    from importlib.metadata import version

    from kuzu_memory import KuzuMemory
    from kuzu_memory.core.models import Memory, MemoryType

    db = input_path.parent / "project" / ".kuzu-memory" / "memories.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    memory = KuzuMemory(db_path=db, enable_git_sync=False, auto_sync=False)
    out: dict[str, Any] = {
        "version": version("kuzu-memory"),
        "kuzu": version("kuzu"),
        "open_s": round(time.perf_counter() - t0, 3),
        "sizes": {},
        "notes": [],
    }

    def save() -> None:
        result_path.write_text(json.dumps(out, indent=2))

    facts, extra = payload["facts"], payload["extra"]
    retries: dict[str, int] = {}
    out["feed_retries"] = retries
    fed = 0
    feed_rate: float | None = None
    for idx, size in enumerate(payload["sizes"]):
        remaining = deadline - time.monotonic()
        if feed_rate:
            predicted = (size - fed) / feed_rate * 1.3 + 2 * PHASE_SECONDS
            if predicted > remaining:
                note = f"not run: feeding {size - fed} more facts needs ~{predicted:.0f} s"
                out["sizes"][str(size)] = {"note": note}
                out["notes"].append(f"{size} facts {note}, {remaining:.0f} s left")
                break
        t_feed = time.perf_counter()
        # The build goes through its bulk path (batch_store_memories), as ours may take a direct route;
        # remember is timed per call below.
        batch = facts[fed:size]
        for s in range(0, len(batch), 500):
            memories = [
                Memory(
                    content=content,
                    memory_type=MemoryType.EPISODIC,
                    source_type="conversation",
                    session_id=session,
                    importance=0.8,
                    confidence=1.0,
                    created_at=datetime.now(),
                )
                for content, session in batch[s : s + 500]
            ]
            for attempt in range(20):
                try:
                    memory.batch_store_memories(memories)
                    break
                except Exception as err:
                    # Its background enrichment (started by remember) can hold Kùzu's single write
                    # transaction: "Only one write transaction at a time is allowed". Wait and retry.
                    retries[type(err).__name__] = retries.get(type(err).__name__, 0) + 1
                    if attempt == 19:
                        out["sizes"][str(size)] = {"note": "not run: its batch store kept failing"}
                        out["notes"].append(f"feeding {size} facts failed: {str(err)[:200]}")
                        save()
                        return 0
                    time.sleep(0.5)
            if time.monotonic() > deadline:
                out["sizes"][str(size)] = {"note": "not run: out of time while feeding"}
                out["notes"].append(f"feeding stopped at {fed + s + 500} facts: out of time")
                save()
                return 0
        feed_s = time.perf_counter() - t_feed
        feed_rate = (size - fed) / feed_s if feed_s else None
        fed = size
        print(f"kuzu-memory: fed {size} facts, {feed_s:.1f} s for this size", flush=True)
        search_ms = []
        per_size = len(payload["queries"]) // len(payload["sizes"])
        t_search = time.perf_counter()
        for question in payload["queries"][idx * per_size : (idx + 1) * per_size]:
            t1 = time.perf_counter()
            memory.attach_memories(question, max_memories=10)
            search_ms.append((time.perf_counter() - t1) * 1000)
            if len(search_ms) >= 20 and time.perf_counter() - t_search > PHASE_SECONDS:
                break
        remember_ms = []
        t_remember = time.perf_counter()
        for content, session in extra[idx * REMEMBER_SAMPLES : (idx + 1) * REMEMBER_SAMPLES]:
            t1 = time.perf_counter()
            memory.remember(content, source="conversation", session_id=session)
            remember_ms.append((time.perf_counter() - t1) * 1000)
            if len(remember_ms) >= 10 and time.perf_counter() - t_remember > PHASE_SECONDS:
                break
            if time.monotonic() > deadline:
                out["notes"].append(f"remember samples at {size} stopped at {len(remember_ms)}: out of time")
                break
        out["sizes"][str(size)] = {
            "search": _pct(search_ms),
            "remember": _pct(remember_ms),
            "feed_facts_per_s": round(feed_rate or 0.0, 1),
        }
        save()
    with_close = getattr(memory, "close", None)
    if callable(with_close):
        with_close()
    if retries:
        out["notes"].append(
            f"its batch store failed and was retried {sum(retries.values())} times: its background "
            "enrichment holds Kùzu's only write transaction"
        )
    out["notes"].append(
        "fed with batch_store_memories (its bulk path); remember timed per call; "
        "attach_memories(question, max_memories=10), default strategy (keyword/entity, no model)"
    )
    save()
    return 0


# ----------------------------------------------------------------- entry points


def run_peers(
    *, sizes: list[int], seed: int, n_queries: int, work_dir: Path, time_limit: float, peer_venv: Path
) -> dict[str, Any]:
    """Both peers, each within its share of ``time_limit`` seconds; never raises."""
    import anyio

    from bench.perf import corpus, queries

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bench.perf peers (internal)")
    sub = parser.add_subparsers(dest="command", required=True)
    worker = sub.add_parser("kuzu-worker")
    worker.add_argument("input", type=Path)
    worker.add_argument("result", type=Path)
    args = parser.parse_args(argv)
    code = kuzu_worker(args.input, args.result)
    sys.stdout.flush()
    os._exit(code)  # its background enrichment threads would otherwise hold the exit


if __name__ == "__main__":
    sys.exit(main())
