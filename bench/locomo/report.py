"""Write a LoCoMo run: its metadata, the markdown table and the JSON, named by the variants."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import hippograph
from bench.locomo.data import CATEGORIES, REPO, Conversation
from bench.locomo.ours import APPLIED_READS, StoreReport, describe_policy
from hippograph.store.embed import FastEmbedder


def machine() -> dict[str, Any]:
    cpu = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu = next(
            (ln.split(":", 1)[1].strip() for ln in cpuinfo.read_text().splitlines() if "model name" in ln), ""
        )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"nproc": cores, "python": platform.python_version(), "platform": platform.platform(), "cpu": cpu}


def revision() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" + uncommitted changes in server/" if git("status", "--porcelain", "server") else "")


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(results: Mapping[str, Any]) -> str:
    meta, methods = results["meta"], results["methods"]
    store = meta["hippograph"]
    head = [
        f"# LoCoMo turn-level evidence retrieval ({meta['data']['file']})",
        "",
        f"- date: {meta['date']}",
        f"- data: {meta['data']['conversations']} conversations, {meta['data']['turns']} turns, "
        f"{meta['data']['questions']} questions (categories 1-4: {meta['data']['by_category']})",
        f"- model: {meta['model']} (dim {meta['dim']})",
        f"- machine: nproc {meta['machine']['nproc']}, Python {meta['machine']['python']}, "
        f"{meta['machine']['platform']}, {meta['machine']['cpu']}",
        f"- hippograph {meta['hippograph_version']} at {meta['revision']} ({meta['hippograph_path']})",
        f"- policy: {meta['policy']}",
        f"- variants: {meta['variants'] or 'none'}",
        f"- hippograph ingest: {store['ingest_s']:.1f} s for {store['turns']} turns "
        f"({1000 * store['ingest_s'] / max(store['turns'], 1):.1f} ms/turn, one remember() each)",
        f"- baselines: one batch embedding of all turns and questions in {meta['baseline_embed_s']:.1f} s",
        f"- total run time: {meta['run_s']:.0f} s",
        f"- errors: {store['errors'] or 'none'}; repeated ids in a result list: {store['repeats']}; "
        f"ids that are no turn: {store['unknown']}; recall narratives over budget: "
        f"{store['recall_over_budget']}",
        f"- notes returned by search/recall: {store['service_notes'] or 'none'}",
        *(
            [
                f"- '{APPLIED_READS}': each question searched in turn on a copy of the ingested store, "
                "what each search recorded applied before the next"
                + (
                    " (this hippograph's reads record nothing)"
                    if "reads record nothing" in store["notes"]
                    else ""
                )
            ]
            if meta.get("applied_reads")
            else []
        ),
        "",
        "| method | R@5 | R@10 | NDCG@10 | cat1 R@10 | cat2 R@10 | cat3 R@10 | cat4 R@10 | tokens/query "
        "| ms/query |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    for name, m in methods.items():
        cats = [fmt(m["by_category"].get(c, {}).get("recall@10")) for c in CATEGORIES]
        latency = fmt(m["latency_ms"]["mean"], 1) if m["latency_ms"] else "—"
        overall = [fmt(m["overall"][key]) for key in ("recall@5", "recall@10", "ndcg@10")]
        rows.append(
            " | ".join(["", name, *overall, *cats, f"{m['tokens_per_query']:.0f}", latency, ""]).strip()
        )
    return "\n".join([*head, *rows, ""])


def write_results(
    results: Mapping[str, Any], out_dir: Path, overrides: Mapping[str, Any], tag: str = ""
) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = tag + "".join(f"-{k}={json.dumps(v)}" for k, v in overrides.items())
    stem = "locomo" + re.sub(r"[^\w.=+-]+", "_", suffix)
    (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out_dir / f"{stem}.md").write_text(markdown(results))
    return out_dir / f"{stem}.md"


def describe_run(
    args: argparse.Namespace,
    convs: Sequence[Conversation],
    embedder: FastEmbedder,
    report: StoreReport,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    questions = [q for c in convs for q in c.questions]
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "data": {
            "file": args.data.name,
            "conversations": len(convs),
            "turns": sum(len(c.turns) for c in convs),
            "questions": len(questions),
            "by_category": dict(sorted(Counter(q.category for q in questions).items())),
            "skipped": dict(sum((c.skipped for c in convs), Counter())),
            "limit_questions": args.limit_questions,
        },
        "model": embedder.name,
        "dim": embedder.dim,
        "machine": machine(),
        "hippograph_version": importlib.metadata.version("hippograph"),
        "revision": revision(),
        "hippograph_path": str(Path(hippograph.__file__).parent),
        "policy": describe_policy(report.policy),
        "recall_budget": args.recall_budget,
        "hippograph": {
            "ingest_s": report.ingest_s,
            "turns": report.turns,
            "errors": dict(report.errors),
            "repeats": report.repeats,
            "unknown": report.unknown,
            "service_notes": dict(report.service_notes),
            "recall_over_budget": report.over_budget,
            "notes": report.notes,
        },
        **extra,
    }
