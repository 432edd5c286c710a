"""LoCoMo turn-level evidence retrieval: hippograph against BM25, vector and RRF baselines.

Run from the repository root (the data stays in ``shared/bench/``, never in the repo):

    python -m bench.locomo                                   # full dev set, 5 conversations
    python -m bench.locomo --conversations 1 --limit-questions 40   # quick check
    python -m bench.locomo --variant graph=false --variant channel_weights.entity=0   # ablation

Each conversation goes into a fresh hippograph store through ``Memory.remember``, one
dialogue turn at a time, as the MCP tools would write it. Every question of categories
1-4 with usable evidence is then asked with ``Memory.search`` (and ``Memory.recall`` when
the service has it), and the returned facts are scored against the evidence turns:
Recall@5, Recall@10, NDCG@10 and tokens returned. The baselines rank the same turns with
the same embedding model. Results print as markdown and go to ``bench/results/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import hippograph
from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder, assemble_default_model

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo_dev.json"
DEFAULT_OUT = REPO / "bench" / "results"
CATEGORIES = (1, 2, 3, 4)
TOP_K = 10
RRF_K = 60
# Each list fused by the RRF baseline is cut here, as hippograph's channels are (fanout 4 x limit 10).
# Fusing shorter lists scores higher on this data (see bench/README.md), so the depth is part of the baseline.
RRF_DEPTH = 40

# ----------------------------------------------------------------- data


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    content: str
    session: int


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    conv_id: str
    turns: list[Turn]
    session_times: dict[int, str]  # session number -> ISO 8601
    questions: list[Question]
    skipped: Counter[str] = field(default_factory=Counter)


_MONTHS = {
    name: number
    for number, name in enumerate(
        ("january february march april may june july august september october november december".split()),
        1,
    )
}
_SESSION_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})", re.I)
_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


def parse_session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00' (LoCoMo gives no time zone)."""
    match = _SESSION_TIME.fullmatch(text.strip())
    if match is None or match.group(5).lower() not in _MONTHS:
        raise ValueError(f"not a LoCoMo session time: {text!r}")
    hour, minute, half, day, month, year = match.groups()
    hour24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    when = datetime(int(year), _MONTHS[month.lower()], int(day), hour24, int(minute))
    return when.isoformat()


def clean_evidence(entries: Iterable[str]) -> tuple[list[str], int]:
    """Evidence ids per LOCOMO_SOURCE.md: split, rewrite 'D:?N:0*M' as 'DN:M', drop the rest.

    Returns the ids (deduplicated, in order) and how many pieces were dropped.
    """
    ids: list[str] = []
    dropped = 0
    for entry in entries:
        for piece in re.split(r"[;,\s]+", str(entry)):
            if not piece:
                continue
            match = _EVIDENCE_ID.fullmatch(piece)
            if match is None:
                dropped += 1
            elif (fixed := f"D{match.group(1)}:{match.group(2)}") not in ids:
                ids.append(fixed)
    return ids, dropped


def turn_content(turn: Mapping[str, Any]) -> str:
    content = f"{turn['speaker']}: {turn['text']}"
    caption = (turn.get("blip_caption") or "").strip()
    return f"{content} [image: {caption}]" if caption else content


def load_conversation(sample: Mapping[str, Any]) -> Conversation:
    raw = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in raw if (m := re.fullmatch(r"session_(\d+)", key)))
    turns = [
        Turn(t["dia_id"], t["speaker"], turn_content(t), n) for n in numbers for t in raw[f"session_{n}"]
    ]
    times = {n: parse_session_time(raw[f"session_{n}_date_time"]) for n in numbers}
    conv = Conversation(sample["sample_id"], turns, times, [])
    known = {t.dia_id for t in turns}
    for index, qa in enumerate(sample["qa"]):
        if qa["category"] not in CATEGORIES:
            conv.skipped[f"category {qa['category']}"] += 1
            continue
        ids, dropped = clean_evidence(qa.get("evidence", []))
        conv.skipped["malformed evidence pieces dropped"] += dropped
        missing = [i for i in ids if i not in known]
        conv.skipped["evidence ids not in the conversation"] += len(missing)
        ids = [i for i in ids if i in known]
        if not ids:
            conv.skipped["no usable evidence"] += 1
            continue
        conv.questions.append(Question(index, qa["question"], qa["category"], tuple(ids)))
    return conv


def load_dataset(path: Path, conversations: int | None, limit_questions: int | None) -> list[Conversation]:
    samples = json.loads(path.read_text("utf-8"))
    convs = [load_conversation(s) for s in samples[:conversations]]
    if limit_questions is not None:
        for conv in convs:
            conv.questions = conv.questions[:limit_questions]
    return convs


# ----------------------------------------------------------------- scoring


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Answer:
    turns: list[str | None]  # ranked dia ids; None = a result that is no turn (or a repeat)
    tokens: int
    latency_ms: float | None = None


@dataclass(frozen=True)
class Score:
    conv_id: str
    category: int
    r5: float
    r10: float
    ndcg10: float
    tokens: int
    latency_ms: float | None


def score(question: Question, conv_id: str, answer: Answer) -> Score:
    relevant = set(question.evidence)
    gains = [turn is not None and turn in relevant for turn in answer.turns[:TOP_K]]
    dcg = sum(1 / math.log2(rank + 2) for rank, gain in enumerate(gains) if gain)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), TOP_K)))
    return Score(
        conv_id,
        question.category,
        sum(gains[:5]) / len(relevant),
        sum(gains) / len(relevant),
        dcg / ideal,
        answer.tokens,
        answer.latency_ms,
    )


def summarize(scores: Sequence[Score]) -> dict[str, Any]:
    def means(rows: Sequence[Score]) -> dict[str, float]:
        return {
            "n": len(rows),
            "recall@5": float(np.mean([r.r5 for r in rows])),
            "recall@10": float(np.mean([r.r10 for r in rows])),
            "ndcg@10": float(np.mean([r.ndcg10 for r in rows])),
        }

    latencies = [r.latency_ms for r in scores if r.latency_ms is not None]
    return {
        "overall": means(scores),
        "by_category": {
            c: means(rows) for c in CATEGORIES if (rows := [r for r in scores if r.category == c])
        },
        "by_conversation": {
            cid: means([r for r in scores if r.conv_id == cid])
            for cid in dict.fromkeys(r.conv_id for r in scores)
        },
        "tokens_per_query": float(np.mean([r.tokens for r in scores])),
        "latency_ms": {
            "mean": float(np.mean(latencies)),
            "p50": float(np.percentile(latencies, 50)),
            "p95": float(np.percentile(latencies, 95)),
        }
        if latencies
        else None,
    }


# ----------------------------------------------------------------- baselines

# One list for every method that tokenizes (NLTK's English list).
STOPWORDS = frozenset(
    """a about above after again against ain all am an and any are aren aren't as at be because been before
    being below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don
    don't down during each few for from further had hadn hadn't has hasn hasn't have haven haven't having
    he her here hers herself him himself his how i if in into is isn isn't it it's its itself just ll m ma
    me mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o of off on once only
    or other our ours ourselves out over own re s same shan shan't she she's should should've shouldn
    shouldn't so some such t than that that'll the their theirs them themselves then there these they this
    those through to too under until up ve very was wasn wasn't we were weren weren't what when where which
    while who whom why will with won won't wouldn wouldn't y you you'd you'll you're you've your yours
    yourself yourselves""".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class BM25:
    """Okapi BM25 over a small corpus, as a dense numpy term-weight matrix."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        tokenized = [tokenize(d) for d in docs]
        self.vocab = {w: i for i, w in enumerate(sorted({w for doc in tokenized for w in doc}))}
        tf = np.zeros((len(docs), len(self.vocab)), dtype=np.float32)
        for row, doc in enumerate(tokenized):
            for word, count in Counter(doc).items():
                tf[row, self.vocab[word]] = count
        df = (tf > 0).sum(axis=0)
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        lengths = tf.sum(axis=1, keepdims=True)
        norm = k1 * (1 - b + b * lengths / max(float(lengths.mean()), 1e-9))
        self.weights = idf * tf * (k1 + 1) / (tf + norm)

    def scores(self, query: str) -> np.ndarray:
        columns = [self.vocab[w] for w in tokenize(query) if w in self.vocab]
        return self.weights[:, columns].sum(axis=1) if columns else np.zeros(len(self.weights))

    def rank(self, query: str) -> list[int]:
        """Documents that share a term with the query, best first (ties in corpus order)."""
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]


def vector_rank(turn_vectors: np.ndarray, query_vector: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-(turn_vectors @ query_vector), kind="stable")]


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K, depth: int = RRF_DEPTH) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(ranking[:depth], 1):
            fused[doc] += 1 / (k + rank)
    return sorted(fused, key=lambda doc: (-fused[doc], doc))


def baseline_answers(
    conv: Conversation, turn_vectors: np.ndarray, question_vectors: np.ndarray
) -> dict[str, list[Answer]]:
    bm25 = BM25([t.content for t in conv.turns])

    def answer(ranking: Sequence[int]) -> Answer:
        top = list(ranking[:TOP_K])
        return Answer(
            [conv.turns[i].dia_id for i in top], sum(count_tokens(conv.turns[i].content) for i in top)
        )

    answers: dict[str, list[Answer]] = {"BM25": [], "vector": [], "RRF (BM25+vector)": []}
    for question, vector in zip(conv.questions, question_vectors, strict=True):
        lexical, dense = bm25.rank(question.text), vector_rank(turn_vectors, vector)
        answers["BM25"].append(answer(lexical))
        answers["vector"].append(answer(dense))
        answers["RRF (BM25+vector)"].append(answer(rrf([lexical, dense])))
    return answers


# ----------------------------------------------------------------- hippograph


def parse_variants(pairs: Sequence[str]) -> dict[str, Any]:
    """'NAME=VALUE' pairs; VALUE is JSON when it parses (3, 0.5, false, {...}), else a string."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"--variant {pair!r}: write NAME=VALUE, e.g. --variant graph=false")
        try:
            overrides[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[name.strip()] = raw
    return overrides


def policy_class() -> type | None:
    try:
        from hippograph.retrieval.policy import RetrievalPolicy
    except ImportError:
        return None
    return RetrievalPolicy if dataclasses.is_dataclass(RetrievalPolicy) else None


def check_variants(overrides: Mapping[str, Any]) -> None:
    """Fail before any work when the overrides cannot apply to this hippograph."""
    if not overrides:
        return
    cls = policy_class()
    if cls is None:
        raise SystemExit("--variant needs hippograph.retrieval.RetrievalPolicy, which this hippograph lacks")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted({n.split(".", 1)[0] for n in overrides} - names)
    if unknown:
        raise SystemExit(f"RetrievalPolicy has no field {unknown}; it has: {', '.join(sorted(names))}")


def apply_variants(memory: Memory, overrides: Mapping[str, Any]) -> Any:
    """Replace fields of the store's RetrievalPolicy; 'field.key=v' sets one key of a mapping field."""
    retriever: Any = getattr(memory, "retriever", None)
    policy: Any = getattr(retriever, "policy", None)
    if policy is None or not dataclasses.is_dataclass(policy):
        if overrides:
            raise SystemExit("--variant: memory.retriever.policy is not a RetrievalPolicy in this hippograph")
        return None
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        top, _, key = name.partition(".")
        if key:
            changes[top] = {**changes.get(top, getattr(policy, top)), key: value}
        else:
            changes[top] = value
    retriever.policy = dataclasses.replace(retriever.policy, **changes)
    return retriever.policy


def describe_policy(policy: Any) -> str:
    if policy is None:
        return "n/a (this hippograph has no RetrievalPolicy)"
    # Enum keys (intents) are str subclasses, so the policy reads as plain JSON.
    return f"{type(policy).__name__} {json.dumps(dataclasses.asdict(policy), default=str)}"


@dataclass
class StoreReport:
    ingest_s: float = 0.0
    turns: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    repeats: int = 0  # a fact id returned twice in one result list
    unknown: int = 0  # a returned id that is no ingested turn
    service_notes: Counter[str] = field(default_factory=Counter)  # SearchOut/RecallOut.notes
    over_budget: int = 0  # recall narratives longer than budget_tokens
    policy: Any = None
    notes: list[str] = field(default_factory=list)


def open_store(data_dir: Path, models_dir: Path, model: str, embedder: FastEmbedder) -> Memory:
    options: dict[str, Any] = {"data_dir": data_dir, "models_dir": models_dir, "embedding_model": model}
    if "maintenance_interval_s" in Settings.model_fields:
        options["maintenance_interval_s"] = 0  # no background pass mid-benchmark
    return Memory.open(Settings(**options), embedder=embedder)


def ingest(memory: Memory, conv: Conversation) -> dict[str, str]:
    """Write every turn through remember(), in order; return fact id -> dia id."""
    fact_to_turn: dict[str, str] = {}
    for turn in conv.turns:
        out = memory.remember(
            turn.content,
            kind="episode",
            event_time=conv.session_times[turn.session],
            session_id=f"{conv.conv_id}-s{turn.session}",
            entities=[turn.speaker],
        )
        fact_to_turn[out.id] = turn.dia_id
    return fact_to_turn


def to_turns(ids: Sequence[str], fact_to_turn: Mapping[str, str], report: StoreReport) -> list[str | None]:
    seen: set[str] = set()
    turns: list[str | None] = []
    for fid in ids:
        if fid in seen:
            report.repeats += 1
            turns.append(None)
            continue
        seen.add(fid)
        if fid not in fact_to_turn:
            report.unknown += 1
        turns.append(fact_to_turn.get(fid))
    return turns


def timed_call(call: Callable[[], Any], report: StoreReport, method: str) -> tuple[Any, float]:
    start = time.perf_counter()
    try:
        out = call()
    except Exception as err:  # a benchmark counts failures and goes on
        if not report.errors[f"{method}: {type(err).__name__}"]:
            traceback.print_exc()
        report.errors[f"{method}: {type(err).__name__}"] += 1
        out = None
    return out, (time.perf_counter() - start) * 1000


def ask_search(
    memory: Memory, question: Question, fact_to_turn: Mapping[str, str], report: StoreReport
) -> Answer:
    out, ms = timed_call(lambda: memory.search(question.text, limit=TOP_K), report, "search")
    hits = out.results if out is not None else []
    report.service_notes.update(getattr(out, "notes", None) or [])
    tokens = sum(count_tokens(h.content) for h in hits)
    return Answer(to_turns([h.id for h in hits], fact_to_turn, report), tokens, ms)


def ask_recall(
    memory: Any, question: Question, fact_to_turn: Mapping[str, str], report: StoreReport, budget: int
) -> Answer:
    out, ms = timed_call(lambda: memory.recall(question.text, budget_tokens=budget), report, "recall")
    if out is None:
        return Answer([], 0, ms)
    report.service_notes.update(getattr(out, "notes", None) or [])
    tokens = count_tokens(out.narrative)
    report.over_budget += tokens > budget
    return Answer(to_turns([f.id for f in out.facts], fact_to_turn, report), tokens, ms)


def hippograph_answers(
    conv: Conversation, memory: Memory, overrides: Mapping[str, Any], budget: int, report: StoreReport
) -> dict[str, list[Answer]]:
    start = time.perf_counter()
    fact_to_turn = ingest(memory, conv)
    report.ingest_s += time.perf_counter() - start
    report.turns += len(conv.turns)
    policy = apply_variants(memory, overrides)
    if report.policy is None:
        print(f"policy: {describe_policy(policy)}", file=sys.stderr)
    report.policy = policy
    answers = {"hippograph search": [ask_search(memory, q, fact_to_turn, report) for q in conv.questions]}
    if hasattr(memory, "recall"):
        answers[f"hippograph recall ({budget} tok)"] = [
            ask_recall(memory, q, fact_to_turn, report, budget) for q in conv.questions
        ]
    elif "no recall" not in report.notes:
        report.notes.append("no recall")
        print("note: this hippograph's Memory has no recall(); recall is not evaluated", file=sys.stderr)
    return answers


# ----------------------------------------------------------------- report


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


def write_results(results: Mapping[str, Any], out_dir: Path, overrides: Mapping[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "".join(f"-{k}={json.dumps(v)}" for k, v in overrides.items())
    stem = "locomo" + re.sub(r"[^\w.=+-]+", "_", suffix)
    (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out_dir / f"{stem}.md").write_text(markdown(results))
    return out_dir / f"{stem}.md"


# ----------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    overrides = parse_variants(args.variant)
    check_variants(overrides)
    convs = load_dataset(args.data, args.conversations, args.limit_questions)
    embedder, models_dir = load_embedder(args.model, args.models_dir)
    turn_vectors, question_vectors, embed_s = embed_for_baselines(convs, embedder)

    scores: dict[str, list[Score]] = defaultdict(list)
    report = StoreReport()
    with tempfile.TemporaryDirectory(prefix="hippograph-locomo-") as tmp:
        for conv, turns, questions in zip(convs, turn_vectors, question_vectors, strict=True):
            answers = baseline_answers(conv, turns, questions)
            with closing(open_store(Path(tmp) / conv.conv_id, models_dir, args.model, embedder)) as memory:
                answers |= hippograph_answers(conv, memory, overrides, args.recall_budget, report)
            for method, got in answers.items():
                scores[method] += [
                    score(q, conv.conv_id, a) for q, a in zip(conv.questions, got, strict=True)
                ]
            print(
                f"{conv.conv_id}: {len(conv.turns)} turns, {len(conv.questions)} questions", file=sys.stderr
            )

    extra = {"variants": overrides, "baseline_embed_s": embed_s, "run_s": time.perf_counter() - started}
    return {
        "meta": describe_run(args, convs, embedder, report, extra),
        "methods": {method: summarize(rows) for method, rows in scores.items()},
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    results = run(args)
    path = write_results(results, args.out, results["meta"]["variants"])
    print(markdown(results))
    print(f"written: {path} and {path.with_suffix('.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
