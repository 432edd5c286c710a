"""Which type remember gives the people, places, organisations and tools an ordinary sentence names.

    python -m bench.entity_types        # prints the table, writes bench/results/entity_types.md

Each sentence is remembered through the service as a client would (its own scope, real stores in
a temporary data dir, no ``entities`` argument: the server finds the names). Then the labelled
name is looked up in that scope: the entity's type is right, neutral (``concept``: the server
claims no type), wrong, or there is no entity of that name at all.

Six sets: ``bench/data/entity_types_dev.jsonl`` (120 sentences, written with the typing code
in view), ``bench/data/entity_types_dev_b.jsonl`` (160 sentences by someone who did not see the
typing code: held out until 2026-11-30, when its totals showed that the phrase frames
(text/name_frames.py), chosen on the first set, did not carry over; its sentences were read and
tuned on from then), ``bench/data/entity_types_dev_c.jsonl`` (240 sentences by a helper that saw
neither, written to be read and tuned on), ``bench/data/entity_types_train.jsonl`` (480
sentences by a helper that saw neither, written to fit a typer on: 2026-12-01, see git log)
``bench/data/entity_types_fresh.jsonl`` (240 sentences written by another helper that saw
neither the code nor the other sets; read only as totals, never fitted on, but a rule was kept
on 2026-12-02 with its total in view) and ``bench/data/entity_types_heldout_2.jsonl`` (240 more
by a helper that saw nothing of the project, 2026-12-02: the clean held-out set).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bench.service import add_models_dir, temporary_memory
from hippograph.service.memory import Memory
from hippograph.text.names import UNKNOWN_TYPE

HERE = Path(__file__).resolve().parent
SETS = {
    "dev": HERE / "data" / "entity_types_dev.jsonl",
    "dev b": HERE / "data" / "entity_types_dev_b.jsonl",
    "dev c": HERE / "data" / "entity_types_dev_c.jsonl",
    "train": HERE / "data" / "entity_types_train.jsonl",
    "held out": HERE / "data" / "entity_types_fresh.jsonl",
    "held out 2": HERE / "data" / "entity_types_heldout_2.jsonl",
}
TYPES = ("person", "place", "organization", "tool")
OUTCOMES = ("right", "neutral", "wrong", "no entity")


def outcome(memory: Memory, text: str, name: str, gold: str, scope: str) -> str:
    memory.remember(text, scope=scope)
    entity = memory.entities.resolve(name, scope)
    if entity is None:
        return "no entity"
    if entity.type == gold:
        return "right"
    return "neutral" if entity.type == UNKNOWN_TYPE else "wrong"


def run(memory: Memory, path: Path, tag: str) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {gold: Counter() for gold in TYPES}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        scope = f"project:types-{tag}-{i}"
        counts[row["type"]][outcome(memory, row["text"], row["name"], row["type"], scope)] += 1
    return counts


def table(results: dict[str, dict[str, Counter[str]]]) -> str:
    out = [
        "# Entity types remember gives the names in ordinary sentences",
        "",
        "| set | type | sentences | " + " | ".join(OUTCOMES) + " |",
        "|---|---|---|" + "---|" * len(OUTCOMES),
    ]
    for name, counts in results.items():
        for gold in (*TYPES, "all"):
            row = sum(counts.values(), Counter()) if gold == "all" else counts[gold]
            total = sum(row.values())
            cells = [f"{row[o]} ({row[o] / total:.0%})" for o in OUTCOMES]
            out.append(f"| {name} | {gold} | {total} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_models_dir(parser)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "entity_types.md")
    args = parser.parse_args()
    results = {}
    with temporary_memory(args.models_dir) as memory:
        for name, path in SETS.items():
            results[name] = run(memory, path, name.replace(" ", "-"))
    text = table(results)
    print(text)
    args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
