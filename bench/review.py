"""Does review list restatements as duplicates, and changed values not? Labelled pairs say.

    python -m bench.review            # prints the table, writes bench/results/review.md

Each pair of ``bench/data/duplicate_pairs.jsonl`` (development: where review's rule was chosen)
and ``bench/data/duplicate_pairs_test.jsonl`` (test: written after the sameness rule was fixed,
never used to choose anything) goes into its own scope through ``remember`` (``a``, then ``b``),
as a client would send them; ``consolidate`` then finds that scope's near pairs and ``review``
lists what it proposes. A restatement (label ``same``) is handled when remember merged it
(corroborated) or review lists the two as a duplicate or a pair to compare, and must not be
called a conflict; a changed value (label ``conflict``) must not be listed as a duplicate, and
should be listed as a conflict or a pair to compare; different facts (label ``different``) must
be called neither.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import date
from pathlib import Path

from bench.service import add_models_dir, temporary_memory
from hippograph.service.memory import Memory

HERE = Path(__file__).resolve().parent
SETS = {
    "development": HERE / "data" / "duplicate_pairs.jsonl",
    "test": HERE / "data" / "duplicate_pairs_test.jsonl",
}
RESULTS = HERE / "results" / "review.md"


def outcome(memory: Memory, a: str, b: str, scope: str) -> str:
    first = memory.remember(a, scope=scope)
    second = memory.remember(b, scope=scope)
    if second.corroborated:
        return "merged"
    memory.consolidate(scope=scope)
    kinds = {item.kind.value for item in memory.review(scope=scope).items if second.id in item.fact_ids}
    assert all(
        first.id in item.fact_ids for item in memory.review(scope=scope).items if second.id in item.fact_ids
    )
    return next((kind for kind in ("duplicate", "conflict", "compare") if kind in kinds), "not listed")


def run(memory: Memory, path: Path, tag: str) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        pair = json.loads(line)
        counts.setdefault(pair["label"], Counter())[
            outcome(memory, pair["a"], pair["b"], f"project:{tag}-{i}")
        ] += 1
    return counts


def share(counter: Counter[str], *outcomes: str) -> str:
    total = sum(counter.values())
    hit = sum(counter[o] for o in outcomes)
    return f"{hit / total:.0%} ({hit}/{total})" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_models_dir(parser)
    args = parser.parse_args()
    lines = [
        f"# review on labelled pairs ({date.today().isoformat()})",
        "",
        "| set | restatements merged or listed as duplicates or to compare (target >= 70%) | "
        "restatements called conflicts | changed values listed as duplicates (target <= 10%) | "
        "changed values listed as conflicts / to compare | different facts listed as duplicates / "
        "as conflicts / to compare |",
        "|---|---|---|---|---|---|",
    ]
    with temporary_memory(args.models_dir) as memory:
        for tag, path in SETS.items():
            counts = run(memory, path, tag[:3])
            same, conflict, different = (counts.get(k, Counter()) for k in ("same", "conflict", "different"))
            lines.append(
                f"| {tag} | {share(same, 'merged', 'duplicate', 'compare')} | {share(same, 'conflict')} | "
                f"{share(conflict, 'duplicate', 'merged')} | {share(conflict, 'conflict')} / "
                f"{share(conflict, 'compare')} | {share(different, 'duplicate', 'merged')} / "
                f"{share(different, 'conflict')} / {share(different, 'compare')} |"
            )
            print(tag, {k: dict(v) for k, v in counts.items()}, flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
