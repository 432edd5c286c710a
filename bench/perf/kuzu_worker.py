"""Feed kuzu-memory and time it, inside the peer's own venv: a script, standard library only.

``bench/perf/peers.py`` runs it there as ``python kuzu_worker.py INPUT RESULT``: INPUT holds the
facts, questions, sizes and time limits; RESULT gets, per size, the raw latency samples in ms
(``search_ms``, ``remember_ms``), rewritten after each size so a run stopped at its time limit
keeps the sizes it finished. The percentiles are computed by the caller.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def run(input_path: Path, result_path: Path) -> int:
    """Runs inside the peer venv: feed kuzu-memory, time remember and attach_memories."""
    import logging

    logging.disable(logging.CRITICAL)  # its background enrichment logs tracebacks
    started = time.monotonic()
    payload = json.loads(input_path.read_text())
    deadline = started + float(payload["deadline_s"])
    remember_samples, phase_seconds = int(payload["remember_samples"]), float(payload["phase_seconds"])
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
            predicted = (size - fed) / feed_rate * 1.3 + 2 * phase_seconds
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
            if len(search_ms) >= 20 and time.perf_counter() - t_search > phase_seconds:
                break
        remember_ms = []
        t_remember = time.perf_counter()
        for content, session in extra[idx * remember_samples : (idx + 1) * remember_samples]:
            t1 = time.perf_counter()
            memory.remember(content, source="conversation", session_id=session)
            remember_ms.append((time.perf_counter() - t1) * 1000)
            if len(remember_ms) >= 10 and time.perf_counter() - t_remember > phase_seconds:
                break
            if time.monotonic() > deadline:
                out["notes"].append(f"remember samples at {size} stopped at {len(remember_ms)}: out of time")
                break
        out["sizes"][str(size)] = {
            "search_ms": search_ms,
            "remember_ms": remember_ms,
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: kuzu_worker.py INPUT RESULT", file=sys.stderr)
        return 2
    code = run(Path(args[0]), Path(args[1]))
    sys.stdout.flush()
    os._exit(code)  # its background enrichment threads would otherwise hold the exit


if __name__ == "__main__":
    sys.exit(main())
