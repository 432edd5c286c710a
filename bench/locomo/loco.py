"""Leave-one-conversation-out: which policy would tuning on four conversations pick, and how does
it score on the fifth?

    python -m bench.locomo --loco anchor_bonus=2 --loco prev_share=0.15 [--entities none]

searches each conversation's store with the default policy and with each candidate, and writes
the table to ``bench/results/locomo-loco[-no_entities].md``. For each conversation, the policy
with the best R@10 over the others (question-weighted; the default wins ties) is chosen and
scored on the held-out one; the table shows those held-out figures beside the plain dev figures
of the default policy (every knob already chosen on all conversations, so in sample).

    python -m bench.locomo.loco RESULTS.json [RESULTS.json ...]

does the same over separate runs (the default, and one ``--variant`` each).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.locomo.data import REPO

METHOD = "hippograph search"
ByConversation = Mapping[str, Mapping[str, float]]


def _name(run: Mapping[str, Any]) -> str:
    variants = run["meta"].get("variants") or {}
    return ", ".join(f"{k}={v}" for k, v in variants.items()) or "default"


def _weighted(by_conv: ByConversation, convs: Sequence[str], metric: str) -> float:
    n = sum(by_conv[c]["n"] for c in convs)
    return sum(by_conv[c][metric] * by_conv[c]["n"] for c in convs) / n


def loco(by_policy: Mapping[str, ByConversation], protocol: str = "") -> str:
    """The leave-one-out table over policies' per-conversation figures (one must be "default")."""
    convs = sorted(by_policy["default"])
    rows, held = [], {"recall@10": 0.0, "ndcg@10": 0.0}
    total = sum(by_policy["default"][c]["n"] for c in convs)
    for conv in convs:
        rest = [c for c in convs if c != conv]
        chosen = max(
            by_policy, key=lambda name: (_weighted(by_policy[name], rest, "recall@10"), name == "default")
        )
        score = by_policy[chosen][conv]
        for metric in held:
            held[metric] += score[metric] * score["n"] / total
        rows.append(f"| {conv} | {chosen} | {score['recall@10']:.3f} | {score['ndcg@10']:.3f} |")
    default = by_policy["default"]
    each = [
        f"| {name} | {_weighted(got, convs, 'recall@10'):.3f} | {_weighted(got, convs, 'ndcg@10'):.3f} |"
        for name, got in by_policy.items()
    ]
    return "\n".join(
        [
            f"# LoCoMo dev, leave one conversation out{f' ({protocol})' if protocol else ''}",
            "",
            "| held out | policy chosen on the other conversations | R@10 | NDCG@10 |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Held out (question-weighted): R@10 {held['recall@10']:.3f}, NDCG@10 {held['ndcg@10']:.3f}. "
            f"Plain dev figures of the default policy: {_weighted(default, convs, 'recall@10'):.3f} / "
            f"{_weighted(default, convs, 'ndcg@10'):.3f}.",
            "",
            "Each policy on all conversations (in sample):",
            "",
            "| policy | R@10 | NDCG@10 |",
            "|---|---|---|",
            *each,
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        raise SystemExit("give the result JSON files of a default run and its --variant runs")
    runs = [json.loads(p.read_text("utf-8")) for p in paths]
    by_policy = {_name(run): run["methods"][METHOD]["by_conversation"] for run in runs}
    if "default" not in by_policy:
        raise SystemExit("one of the files must be a run of the default policy (no --variant)")
    table = loco(by_policy)
    out = REPO / "bench" / "results" / "locomo-loco.md"
    out.write_text(table + "\n", encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
