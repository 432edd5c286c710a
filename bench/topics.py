"""Do the topics ``consolidate`` finds hold what belongs together? LoCoMo's multi-hop evidence says.

    python -m bench.topics                 # prints the table, writes bench/results/topics.md
    python -m bench.topics --keep DIR      # keep (and reuse) each conversation's store in DIR

Each LoCoMo dev conversation goes into its own store, turn by turn through ``remember_many``
(content, session and time only: no entities given). ``consolidate`` then finds its topics. A
multi-hop question's evidence turns are facts a good topic keeps together: the table gives how
often two evidence turns of one question share a topic, against how often two facts would if
the same topic sizes were dealt out at random (the sum over topics of s(s-1), over n(n-1)), and
the ratio of the two. Also: the share of facts in a topic, the median topic size, labels that
name a speaker (they must not), and how long consolidate took.

The choices in ``service/consolidation.py`` and ``domain/topics.py`` were made looking at the
tuning conversations (conv-26, conv-30) only; the other three are reported as held out.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.locomo.data import DEFAULT_DATA, Conversation, load_dataset
from bench.service import MODELS_DIR, add_models_dir
from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder, assemble_default_model

TUNING = ("conv-26", "conv-30")
MULTI_HOP = 1
RESULTS = Path(__file__).resolve().parent / "results" / "topics.md"


@dataclass
class Scored:
    conv_id: str
    facts: int
    in_topics: int
    topics: int
    median_size: float
    pairs: int
    together: int
    expected: float  # share of random pairs in one topic, topic sizes kept
    speaker_labels: int
    seconds: float
    labels: list[str]

    @property
    def share(self) -> float:
        return self.together / self.pairs if self.pairs else 0.0


def ingest(memory: Memory, conv: Conversation) -> dict[str, str]:
    """Every turn, in order, in batches; dia id -> fact id."""
    items = [
        {
            "content": t.content,
            "kind": "episode",
            "session_id": f"s{t.session}",
            "event_time": conv.session_times[t.session],
        }
        for t in conv.turns
    ]
    out = memory.remember_many(items)
    return {t.dia_id: o.id for t, o in zip(conv.turns, out, strict=True)}


def score(memory: Memory, conv: Conversation, fact_of: dict[str, str]) -> Scored:
    started = time.monotonic()
    report = memory.consolidate()
    seconds = time.monotonic() - started
    topic_of: dict[str, str] = {}
    sizes: list[int] = []
    labels: list[str] = []
    for tid in memory.stores.topics.of_scope("global"):
        detail = memory.topic(tid)
        sizes.append(detail.size)
        labels.append(detail.label)
        topic_of.update(dict.fromkeys(detail.fact_ids, tid))
    pairs = [
        (fact_of[a], fact_of[b])
        for q in conv.questions
        if q.category == MULTI_HOP
        for a, b in itertools.combinations(q.evidence, 2)
    ]
    together = sum(1 for a, b in pairs if a in topic_of and topic_of[a] == topic_of.get(b))
    n = len(fact_of)
    speakers = {t.speaker.split()[0].lower() for t in conv.turns}
    return Scored(
        conv_id=conv.conv_id,
        facts=report.scopes[0].facts,
        in_topics=report.scopes[0].in_topics,
        topics=len(sizes),
        median_size=statistics.median(sizes) if sizes else 0.0,
        pairs=len(pairs),
        together=together,
        expected=sum(s * (s - 1) for s in sizes) / (n * (n - 1)),
        speaker_labels=sum(any(s in label.split(", ") for s in speakers) for label in labels),
        seconds=seconds,
        labels=labels,
    )


def row(name: str, scored: list[Scored]) -> str:
    pairs = sum(s.pairs for s in scored)
    share = sum(s.together for s in scored) / pairs
    expected = sum(s.expected * s.pairs for s in scored) / pairs
    facts = sum(s.facts for s in scored)
    sizes = statistics.median(s.median_size for s in scored)
    return (
        f"| {name} | {facts} | {sum(s.in_topics for s in scored) / facts:.0%} | "
        f"{sum(s.topics for s in scored)} | {sizes:g} | {pairs} | {share:.3f} | {expected:.3f} | "
        f"**{share / expected:.1f}x** | {sum(s.speaker_labels for s in scored)} | "
        f"{max(s.seconds for s in scored):.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_models_dir(parser)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", type=Path, help="keep each conversation's store here (reused if there)")
    args = parser.parse_args()
    models: Path = args.models_dir or MODELS_DIR
    models.mkdir(parents=True, exist_ok=True)
    assemble_default_model(models)
    embedder = FastEmbedder(DEFAULT_MODEL, models)
    scored: list[Scored] = []

    with tempfile.TemporaryDirectory() as scratch:
        for conv in load_dataset(args.data, None, None):
            data_dir = (args.keep or Path(scratch)) / conv.conv_id
            fresh = not (data_dir / "ids.tsv").exists()
            data_dir.mkdir(parents=True, exist_ok=True)
            settings = Settings(data_dir=data_dir, models_dir=models, maintenance_interval_s=0)
            memory = Memory.open(settings, embedder=embedder)
            try:
                if fresh:
                    fact_of = ingest(memory, conv)
                    (data_dir / "ids.tsv").write_text("".join(f"{d}\t{f}\n" for d, f in fact_of.items()))
                else:
                    lines = (data_dir / "ids.tsv").read_text().splitlines()
                    fact_of = dict(line.split("\t") for line in lines)
                scored.append(score(memory, conv, fact_of))
            finally:
                memory.close()
            print(f"{conv.conv_id}: {scored[-1]}"[:300], flush=True)
    lines = [
        "# Topics on LoCoMo dev conversations (`python -m bench.topics`)",
        "",
        "| conversations | facts | in a topic | topics | median size | multi-hop pairs | share in one "
        "topic | at random | ratio | labels naming a speaker | consolidate (s, max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    tuning = [s for s in scored if s.conv_id in TUNING]
    held = [s for s in scored if s.conv_id not in TUNING]
    lines += [row("tuning: " + ", ".join(TUNING), tuning), row("held out: the other three", held)]
    lines += [row(s.conv_id, [s]) for s in scored]
    lines += ["", "Labels, first 12 of each held-out conversation:", ""]
    lines += [f"- {s.conv_id}: " + " / ".join(s.labels[:12]) for s in held]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
