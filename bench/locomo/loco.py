"""Leave-one-conversation-out: which policy variant would tuning on four conversations pick, and
how does it score on the fifth?

    python -m bench.locomo.loco RESULTS.json [RESULTS.json ...]

Each file is one ``python -m bench.locomo`` run (the default policy, or one ``--variant``) over
the same conversations. For each conversation, the variant with the best R@10 over the other
conversations (question-weighted) is chosen and scored on the held-out one; the table shows
those held-out figures beside the plain dev figures of the default policy (every knob already
chosen on all conversations, so in sample). Written to bench/results/locomo-loco.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.locomo.data import REPO

METHOD = "hippograph search"


def _name(run: Mapping[str, Any]) -> str:
    variants = run["meta"].get("variants") or {}
    return ", ".join(f"{k}={v}" for k, v in variants.items()) or "default"


def _weighted(by_conv: Mapping[str, Mapping[str, float]], convs: Sequence[str], metric: str) -> float:
    n = sum(by_conv[c]["n"] for c in convs)
    return sum(by_conv[c][metric] * by_conv[c]["n"] for c in convs) / n


def loco(runs: Sequence[Mapping[str, Any]]) -> str:
    by_run = {_name(r): r["methods"][METHOD]["by_conversation"] for r in runs}
    convs = sorted(next(iter(by_run.values())))
    rows, held = [], {"recall@10": 0.0, "ndcg@10": 0.0}
    total = sum(next(iter(by_run.values()))[c]["n"] for c in convs)
    for conv in convs:
        rest = [c for c in convs if c != conv]
        chosen = max(by_run, key=lambda name: (_weighted(by_run[name], rest, "recall@10"), name == "default"))
        score = by_run[chosen][conv]
        for metric in held:
            held[metric] += score[metric] * score["n"] / total
        rows.append(f"| {conv} | {chosen} | {score['recall@10']:.3f} | {score['ndcg@10']:.3f} |")
    default = by_run.get("default")
    plain = (
        f"{_weighted(default, convs, 'recall@10'):.3f} / {_weighted(default, convs, 'ndcg@10'):.3f}"
        if default
        else "n/a"
    )
    return "\n".join(
        [
            "# LoCoMo dev, leave one conversation out",
            "",
            f"Variants compared: {', '.join(by_run)}.",
            "",
            "| held out | variant chosen on the other four | R@10 | NDCG@10 |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Held out (question-weighted): R@10 {held['recall@10']:.3f}, NDCG@10 {held['ndcg@10']:.3f}. "
            f"Plain dev figures of the default policy: {plain}.",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        raise SystemExit("give the result JSON files of a default run and its --variant runs")
    table = loco([json.loads(p.read_text("utf-8")) for p in paths])
    out = REPO / "bench" / "results" / "locomo-loco.md"
    out.write_text(table + "\n", encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
