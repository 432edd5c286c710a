"""Performance at scale: hippograph from 1k to 100k facts, beside the floor and beside peers.

One command, from the repository root (the venv has hippograph installed, plus the ``bench``
extras ``matplotlib``, ``psutil`` and ``pyinstrument``; Node.js/npx for one peer)::

    python -m bench.perf                                  # 1k, 10k, 100k facts, peers on
    python -m bench.perf --sizes 1000,10000 --no-peers    # quick look

It prints one markdown table (ours, floor, ratio to the floor, growth between sizes,
targets, peers) and writes ``bench/results/perf.md``, ``perf.json``, ``perf.png`` (p50 and
p95 latency vs store size, log-log) and ``perf_profile.txt`` (where the time of search,
recall, remember and opening the store goes at the largest size).

What one run does, per store size N (each size in its own worker process, so the peak RSS
of one size does not leak into the next):

1. **Corpus.** A deterministic generated memory (``random.Random(seed)``): 400 people, 80
   projects, 40 places, 70 tools, 60 topics, picked with Zipf weights so a few entities are
   hubs (the busiest person and project are each in ~12% of facts); preferences,
   decisions, procedures, episodes and plain facts from varied templates (~94% distinct
   texts); 1-3 tags; sessions of 4-20 facts (NEXT edges); event times spread evenly over
   three years; ~4% of facts get a CAUSES link from an earlier fact of their session; ~1/3
   carry subject/predicate/object, mostly as ``user_edit``, so later values supersede
   earlier ones (the rest contradict). The store of size N holds the first N facts of one
   stream. Queries are distinct paraphrase-like questions over the same vocabulary (people,
   projects, tools, topics; some with a time phrase such as "in May 2023").
2. **Build**, by the product path: ``Memory.remember_many`` over the corpus in calls of
   2,000 facts (each call validates, embeds and writes its facts in batches), then
   ``Memory.link`` for each CAUSES edge of the call. Its facts/s (time in ``remember_many``
   only) is the "bulk import" figure, set against the embedding model's own batch throughput
   measured in the same worker (1,024 corpus texts in calls of 64, before and after the
   build; the mean). Stores above 10k facts are built with the vectors the same model
   computed for the same texts in earlier runs (``--vector-cache``, default
   ``~/.cache/hippograph/bench-vectors``; the first run fills it): embedding 100k facts
   alone takes the model ~7 min. Such a size reports no bulk-import figure. The store is
   then closed and reopened; every latency figure goes through ``Memory.remember`` /
   ``search`` / ``recall`` or the MCP tools, with the model itself.
3. **Warm latency** (store reopened, ``Memory.tune_indexes`` run as a server runs it in the
   background, 5 warm-up queries): ``search(q, limit=10)`` and
   ``recall(q, budget_tokens=1000)``, with graph expansion on and off
   (``retriever.with_policy(graph=False)``); then 300 ``remember`` calls with new facts of
   the same stream (the service path). Accesses are recorded as the tools record them and
   applied when the store closes. A phase stops early past ``--phase-seconds`` once it has
   30 samples (the JSON has ``n`` for every figure), so a slow size cannot stall the run.
4. **Floor**, same process, same table, same queries: the model embedding one query; a
   bare LanceDB query on the ``facts`` table (``table.search(vec).limit(10).to_list()``);
   exact numpy top-k over the same vectors held in RAM; the floor pipeline (embed + bare
   LanceDB) that the ratio rows divide by; and LanceDB as search calls it (k=40, cosine,
   status/scope prefilter), to show what the filter costs.
5. **MCP.** The store is closed and ``python -m hippograph serve`` is started over stdio
   (``HIPPOGRAPH_DATA_DIR``/``HIPPOGRAPH_MODELS_DIR``) three times: cold start is the median
   time from spawn to the first answered ``search`` tool call. The last session also times
   200 ``remember`` and 50 ``search`` tool calls and reads the server's RSS and peak RSS
   (``/proc/PID/status`` VmRSS/VmHWM) after each step.
6. **Disk**: bytes on disk (``du``) of the data dir after close, per fact, split into Kùzu and
   LanceDB; the model lives in a separate models dir and is not counted.

At the largest size the worker also times each stage of search, recall and remember by
wrapping the store methods from the bench (no server code changes), and profiles them and
``Memory.open`` with pyinstrument, into ``perf_profile.txt``.

Peers (``--peers``, default on; ``bench/perf_peers.py``) get the same facts and questions:
the reference MCP memory server (``npx -y @modelcontextprotocol/server-memory`` over stdio)
and ``kuzu-memory`` from PyPI in its own venv (``--peer-venv``, created with pip if
missing). A peer that cannot install or run within its time limit is reported with the
reason, never fatal.

Noise: load average and CPU pressure (PSI) are recorded at the start and end. Other
processes on a 2-core machine inflate every figure (ours, the floor and the peers alike),
which is why ratios to the floor, measured in the same process at the same time, are
reported beside the absolute figures.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import hashlib
import importlib.metadata
import io
import itertools
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "bench" / "results"
DEFAULT_SIZES = (1_000, 10_000, 100_000)
REMEMBER_SAMPLES = 300
MCP_REMEMBER_SAMPLES = 200
PROFILE_REMEMBERS = 20
MCP_SEARCH_SAMPLES = 50
COLD_STARTS = 3
EMBED_BATCH_TEXTS = 1024
BUILD_CHUNK = 2_000  # facts per remember_many call while building: progress in the log
# Stores larger than this are built with vectors the model computed in earlier runs (see
# CachedEmbedder): embedding 100k facts takes the model ~7 min of a 20-minute budget. The
# bulk-import figure comes from the sizes built with the model itself.
CACHE_ABOVE = 10_000
DEFAULT_VECTOR_CACHE = Path.home() / ".cache" / "hippograph" / "bench-vectors"
START = datetime(2022, 6, 1, 9, 0, tzinfo=UTC)
SPAN = timedelta(days=3 * 365)

# Targets at the largest size (2 cores, 100k facts, warm). Key -> (limit, unit, description).
TARGETS: dict[str, tuple[float, str]] = {
    "search_graph.p50": (20.0, "ms"),
    "search_graph.p95": (50.0, "ms"),
    "recall_graph.p95": (80.0, "ms"),
    "remember.p50": (15.0, "ms"),
    "remember.p95": (40.0, "ms"),
    "cold_start_s": (2.0, "s"),
    "server_peak_rss_mb": (500.0, "MB"),
    "disk_bytes_per_fact": (4096.0, "B"),
}
GROWTH_TARGET = 1.5
BULK_TARGET = 0.8

# ----------------------------------------------------------------- corpus

_FIRST = (
    "Alice Bruno Chen Dana Emeka Farah Goran Hana Ivan Julia Kofi Lena Mateo Nadia Omar Priya Quentin Rosa "
    "Sven Tariq Uma Viktor Wen Ximena Yusuf Zoe Amara Bjorn Carmen Dmitri Elif Felix Greta Hiro Ines Jonas "
    "Kira Luca Maya Nils Olga Pavel Rania Soren Tomas Ulla Vera Willem Yara Zane"
).split()
_LAST = (
    "Moreno Okafor Lindqvist Haddad Novak Tanaka Ferreira Kowalski Brennan Petrov Achebe Sato Dubois "
    "Castillo Nguyen Weber Rossi Jansen Kaur Mendes Larsen Schmidt Ivanova Costa Hughes Yilmaz Bauer Silva "
    "Khan Fischer"
).split()
_PROJECT_A = (
    "Atlas Nimbus Cobalt Borealis Quartz Falcon Juniper Meridian Orion Pegasus Sable Tundra Vega Zephyr "
    "Aurora Beacon Cinder Ember Fjord Granite Harbor Indigo Kestrel Lumen Monarch"
).split()
_PROJECT_B = (
    "Billing Search Checkout Analytics Gateway Mobile Onboarding Payments Reporting Sync Ledger Scheduler "
    "Inbox Catalog Pipeline Portal"
).split()
_PLACES = (
    "Berlin Lisbon Nairobi Osaka Toronto Austin Krakow Dublin Seoul Melbourne Bogota Oslo Cairo Denver "
    "Helsinki Porto Lagos Prague Manila Zurich Valencia Montreal Hanoi Tallinn Lyon Accra Boston Madrid "
    "Vilnius Santiago Kyoto Bristol Mumbai Leipzig Quito Bergen Tbilisi Perth Seville Utrecht"
).split()
_TOOLS = (
    "Postgres Redis Kafka Jenkins Terraform Grafana Prometheus Sentry Figma Notion Jira Linear Vim Emacs "
    "VSCode PyCharm Docker Podman Kubernetes Nomad Ansible Airflow Dagster Snowflake BigQuery DuckDB "
    "ClickHouse Elasticsearch Meilisearch RabbitMQ NATS Celery FastAPI Django Flask Rails Spring React "
    "Svelte Vue Tailwind Webpack Vite Bazel Gradle Poetry Ruff Mypy Pytest Playwright Cypress Datadog "
    "PagerDuty Opsgenie Vault Consul Nginx Envoy Traefik Caddy GitLab GitHub Bitbucket CircleCI Buildkite "
    "Loki Tempo Jaeger Superset Metabase Tableau Looker"
).split()
_TOPICS = (
    "release cadence|invoice export|cache invalidation|schema migration|on-call rotation|login flow|"
    "search ranking|error budget|data retention|feature flags|rate limiting|audit trail|pricing page|"
    "mobile crash reports|password reset|webhook retries|dashboard latency|test flakiness|build times|"
    "dependency upgrades|access reviews|backup restore|tax rules|refund policy|email templates|"
    "accessibility audit|dark mode|onboarding checklist|API versioning|queue backlog|disk usage|"
    "cost allocation|vendor contract|hiring plan|sprint planning|retro notes|incident review|"
    "customer interviews|roadmap draft|load testing|SLA report|translation workflow|image uploads|"
    "push notifications|session timeouts|CSV import|GDPR requests|partner integration|nightly jobs|"
    "usage metering|quarterly goals|budget review|design tokens|component library|offline mode|"
    "geo routing|fraud checks|ledger reconciliation|cold storage|log sampling"
).split("|")
_ACTIVITIES = {
    "code review": "code_review_tool",
    "note taking": "notes_tool",
    "writing docs": "docs_tool",
    "local development": "dev_environment",
    "dashboards": "dashboard_tool",
    "tracking tasks": "task_tracker",
    "debugging": "debugger",
    "deploys": "deploy_tool",
}
_DECIDE = (
    "migrate to|drop|adopt|pilot|standardise on|phase out|upgrade|evaluate|self-host|pay for|freeze|sunset"
).split("|")
_ISSUES = (
    "memory leak|timeout spike|data race|failed deploy|broken build|slow query|flaky test|outage|"
    "certificate expiry|disk full alert|stale cache|duplicate charge"
).split("|")
_COMPONENTS = "the job queue|metrics|search|auth|payments|logging|the CI pipeline|tracing|storage".split("|")
_STEPS = (
    "run the smoke tests|tag the release|notify the support channel|bump the version|check the dashboards|"
    "drain the old workers|rotate the credentials file|update the changelog|warm the caches|"
    "backfill the missing rows|ask for a second review|pin the base image"
).split("|")
_MOODS = "happy|annoyed|relieved|worried|surprised|impressed|frustrated|curious".split("|")
_MONTHS = "January February March April May June July August September October November December".split()
_TAGS = (
    "work infra frontend backend hiring travel meeting incident preference process tooling release security "
    "finance design ops docs testing mobile data planning people customer cost performance"
).split()
_MULTI = "likes knows uses works_with".split()


@dataclass(frozen=True)
class GenFact:
    content: str
    kind: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    session_id: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    source: str | None = None
    cause: int | None = None  # index of an earlier fact (same session) that CAUSES this one


@dataclass(frozen=True)
class Query:
    text: str
    key: str  # the entity or word a substring-only peer searches for


class Vocabulary:
    def __init__(self, seed: int) -> None:
        rng = random.Random(seed * 7919 + 1)
        pairs = [f"{a} {b}" for a in _FIRST for b in _LAST]
        self.people = rng.sample(pairs, 400)
        projects = [f"{a} {b}" for a in _PROJECT_A for b in _PROJECT_B]
        self.projects = rng.sample(projects, 80)
        self.places = list(_PLACES)
        self.tools = list(_TOOLS)
        rng.shuffle(self.places)
        rng.shuffle(self.tools)

    @staticmethod
    def weights(n: int, s: float = 0.9) -> list[float]:
        return [1.0 / (rank**s) for rank in range(1, n + 1)]


class _Picker:
    """Zipf-weighted picks from a list (rank 1 is the most frequent)."""

    def __init__(self, rng: random.Random, items: Sequence[str], s: float = 0.9) -> None:
        self.rng = rng
        self.items = list(items)
        self.cum = list(itertools.accumulate(Vocabulary.weights(len(items), s)))
        self.total = self.cum[-1]

    def one(self) -> str:
        return self.items[bisect.bisect_right(self.cum, self.rng.random() * self.total)]

    def __call__(self, k: int) -> list[str]:
        out: list[str] = []
        while len(out) < k:
            pick = self.one()
            if pick not in out:
                out.append(pick)
        return out


def corpus(n: int, seed: int = 7) -> list[GenFact]:
    """The first ``n`` facts of the stream for ``seed`` (a prefix of any longer corpus)."""
    vocab = Vocabulary(seed)
    rng = random.Random(seed)
    person = _Picker(rng, vocab.people)
    project = _Picker(rng, vocab.projects)
    place = _Picker(rng, vocab.places, 0.7)
    tool = _Picker(rng, vocab.tools, 0.8)
    topic = _Picker(rng, _TOPICS, 0.6)
    facts: list[GenFact] = []
    session = 0
    while len(facts) < n:
        session += 1
        sid = f"sess-{session:06d}"
        length = rng.randint(4, 20)
        focus_people = person(2)
        focus_project = project.one()
        first = len(facts)
        for _ in range(length):
            if len(facts) >= n:
                break
            p = focus_people[0] if rng.random() < 0.6 else person.one()
            p2 = focus_people[1] if rng.random() < 0.5 else person.one()
            if p2 == p:
                p2 = next(x for x in vocab.people if x != p)
            proj = focus_project if rng.random() < 0.7 else project.one()
            t, t2 = tool(2)
            top = topic.one()
            roll = rng.random()
            subject = predicate = obj = source = None
            cause = None
            entities: tuple[str, ...]
            tags: tuple[str, ...]
            if roll < 0.16:
                kind = "preference"
                activity = rng.choice(list(_ACTIVITIES))
                content = rng.choice(
                    (
                        f"{p} prefers {t} over {t2} for {activity}.",
                        f"For {activity}, {p} would rather use {t} than {t2}.",
                        f"{p} switched to {t} for {activity} and says {t2} felt {rng.choice(_MOODS)} slow.",
                        f"When it comes to {activity}, {p} sticks with {t}.",
                    )
                )
                entities = (p, t)
                subject, predicate, obj = p, f"prefers_{_ACTIVITIES[activity]}", t
                source = "user_edit" if rng.random() < 0.75 else None
                tags = ("preference", "tooling")
            elif roll < 0.36:
                kind = "decision"
                verb = rng.choice(_DECIDE)
                reason = rng.choice(
                    (
                        f"because the {top} kept causing a {rng.choice(_ISSUES)}",
                        f"to cut the {top} cost by {rng.randint(5, 60)} percent",
                        f"after the {rng.choice(_ISSUES)} in {rng.choice(_MONTHS)}",
                        f"so that the {top} work can ship before {rng.choice(_MONTHS)}",
                    )
                )
                content = rng.choice(
                    (
                        f"The {proj} team decided to {verb} {t} {reason}.",
                        f"{p} decided that {proj} will {verb} {t} {reason}.",
                        f"We agreed with {p} to {verb} {t} for the {top} in {proj} {reason}.",
                    )
                )
                entities = (proj, p, t)
                tags = ("work", rng.choice(("planning", "infra", "cost", "process")))
                # A decision often follows from something that happened earlier in the session.
                if len(facts) > first and rng.random() < 0.2:
                    cause = rng.randrange(first, len(facts))
            elif roll < 0.50:
                kind = "procedure"
                s1, s2, s3 = rng.sample(_STEPS, 3)
                content = rng.choice(
                    (
                        f"To deploy {proj}, {s1}, then {s2}, and finally {s3}.",
                        f"Before touching the {top} in {proj}, {s1} and {s2} with {t}.",
                        f"The {proj} runbook for a {rng.choice(_ISSUES)}: {s1}, {s2}, then page {p}.",
                    )
                )
                entities = (proj, t) if "page" not in content else (proj, p)
                tags = ("process", rng.choice(("ops", "release", "docs")))
            elif roll < 0.78:
                kind = "episode"
                issue = rng.choice(_ISSUES)
                an_issue = f"{'an' if issue[0] in 'aeiou' else 'a'} {issue}"
                content = rng.choice(
                    (
                        f"{p} met {p2} in {place.one()} to discuss the {top} of {proj}.",
                        f"{p} reported {an_issue} in {proj} right after the {top} change.",
                        f"During the {proj} review, {p} and {p2} argued about the {top}.",
                        f"{p} was {rng.choice(_MOODS)} that {proj} hit {an_issue} during the demo.",
                        f"{p2} helped {p} trace the {issue} in {proj} back to {t}.",
                    )
                )
                entities = (p, p2, proj) if p2 in content else (p, proj)
                tags = (rng.choice(("meeting", "incident", "people", "customer")),)
            else:
                kind = "fact"
                shape = rng.random()
                if shape < 0.35:
                    where = place.one()
                    content = rng.choice(
                        (
                            f"{p} is based in the {where} office.",
                            f"{p} moved to {where} and now works from there.",
                            f"{p} lives in {where}.",
                        )
                    )
                    entities = (p, where)
                    subject, predicate, obj = p, "based_in", where
                    source = "user_edit" if rng.random() < 0.7 else None
                    tags = ("people", "travel")
                elif shape < 0.55:
                    content = f"{p} reports to {p2} on the {proj} team."
                    entities = (p, p2, proj)
                    subject, predicate, obj = p, "reports_to", p2
                    source = "user_edit" if rng.random() < 0.7 else None
                    tags = ("people", "work")
                elif shape < 0.8:
                    content = f"{proj} uses {t} for {rng.choice(_COMPONENTS)}."
                    entities = (proj, t)
                    subject, predicate, obj = proj, rng.choice(_MULTI[2:]), t
                    tags = ("tooling", rng.choice(("backend", "infra", "data")))
                else:
                    content = f"The {top} of {proj} is owned by {p}; ask {p2} when {p} is away."
                    entities = (proj, p, p2)
                    tags = ("work", "people")
            extra = rng.choice(_TAGS) if rng.random() < 0.5 else None
            all_tags = tuple(dict.fromkeys((*tags, *([extra] if extra else ()))))
            facts.append(
                GenFact(
                    content=content,
                    kind=kind,
                    tags=all_tags,
                    entities=entities,
                    session_id=sid,
                    subject=subject,
                    predicate=predicate,
                    object=obj,
                    source=source,
                    cause=cause,
                )
            )
    return facts


def event_times(n: int, offset: int = 0, total: int | None = None) -> list[str]:
    """ISO event times for facts offset..offset+n of a store of ``total`` facts: three years, in order."""
    total = total or n
    step = SPAN / max(total, 1)
    return [(START + step * (offset + i)).isoformat().replace("+00:00", "Z") for i in range(n)]


def queries(n: int, seed: int = 7) -> list[Query]:
    vocab = Vocabulary(seed)
    rng = random.Random(seed * 31 + 5)
    person = _Picker(rng, vocab.people)
    project = _Picker(rng, vocab.projects)
    place = _Picker(rng, vocab.places, 0.7)
    tool = _Picker(rng, vocab.tools, 0.8)
    topic = _Picker(rng, _TOPICS, 0.6)
    out: list[Query] = []
    seen: set[str] = set()
    while len(out) < n:
        p, proj, t, top = person.one(), project.one(), tool.one(), topic.one()
        shape = rng.randrange(10)
        activity = rng.choice(list(_ACTIVITIES))
        month, year = rng.choice(_MONTHS), rng.choice((2022, 2023, 2024))
        q = (
            (f"What does {p} use for {activity}?", p),
            (f"Why did the {proj} team decide to {rng.choice(_DECIDE)} {t}?", proj),
            (f"How do we deploy {proj}?", proj),
            (f"Who did {p} meet in {place.one()}?", p),
            (f"Where is {p} based these days?", p),
            (f"What went wrong with the {top} in {proj}?", proj),
            (f"Which tool does {proj} use for {rng.choice(_COMPONENTS)}?", proj),
            (f"What did we decide about the {top} in {month} {year}?", top),
            (f"Who does {p} report to?", p),
            (f"what problems did {p} have with {t}", t),
        )[shape]
        if q[0] not in seen:  # distinct questions: a peer's answer cache must not flatter it
            seen.add(q[0])
            out.append(Query(*q))
    return out


# ----------------------------------------------------------------- measurement helpers


def pct(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {}
    arr = np.asarray(samples_ms, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(arr, 50)), 3),
        "p95": round(float(np.percentile(arr, 95)), 3),
        "p99": round(float(np.percentile(arr, 99)), 3),
        "mean": round(float(arr.mean()), 3),
        "n": len(samples_ms),
    }


def timed(
    fn: Callable[[Any], Any], items: Sequence[Any], seconds: float | None = None, minimum: int = 30
) -> list[float]:
    """Latency in ms of ``fn`` per item; stops early past ``seconds`` once ``minimum`` samples exist."""
    out: list[float] = []
    started = time.perf_counter()
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t0) * 1000.0)
        if seconds is not None and len(out) >= minimum and time.perf_counter() - started > seconds:
            break
    return out


def du_bytes(path: Path) -> int:
    """Bytes on disk (allocated blocks), like ``du -s``."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def apparent_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def vm_status(pid: int | None) -> dict[str, float] | None:
    """Current and peak resident set of a process, MB (VmRSS, VmHWM)."""
    if pid is None:
        return None
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out["now" if line.startswith("VmRSS") else "peak"] = round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        return None
    return out


def cpu_pressure() -> str | None:
    """Linux PSI: the share of time some runnable task waited for a CPU (avg over 60 s)."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = dict(part.split("=") for part in line.split()[1:])
    return f"{fields.get('avg60', '?')}%"


def log(message: str) -> None:
    print(f"[perf {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------- builds


def remember_kwargs(fact: GenFact, when: str) -> dict[str, Any]:
    return {
        "kind": fact.kind,
        "tags": list(fact.tags),
        "entities": list(fact.entities),
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "source": fact.source,
        "event_time": when,
        "session_id": fact.session_id,
    }


def build(memory: Any, facts: Sequence[GenFact], times: Sequence[str]) -> dict[str, Any]:
    """The product path: remember_many over the corpus, link() for CAUSES. Returns timings."""
    ids: list[str] = []
    remember_s = 0.0
    link_s = 0.0
    started = time.perf_counter()
    for start in range(0, len(facts), BUILD_CHUNK):
        chunk = facts[start : start + BUILD_CHUNK]
        items = [{"content": f.content, **remember_kwargs(f, times[start + i])} for i, f in enumerate(chunk)]
        t0 = time.perf_counter()
        ids += [out.id for out in memory.remember_many(items)]
        t1 = time.perf_counter()
        remember_s += t1 - t0
        for i, fact in enumerate(chunk, start):
            if fact.cause is not None:
                memory.link(ids[fact.cause], ids[i], "causes")
        link_s += time.perf_counter() - t1
        log(f"  remembered {len(ids)}/{len(facts)} ({len(ids) / remember_s:.0f} facts/s)")
    return {
        "route": "remember_many",
        "seconds": round(time.perf_counter() - started, 2),
        "remember_seconds": round(remember_s, 2),
        "link_seconds": round(link_s, 2),
        "facts_per_s": round(len(facts) / remember_s, 1) if remember_s else None,
    }


class CachedEmbedder:
    """The model, plus the vectors it computed for the same texts in earlier runs.

    Only for building a large store faster: every latency figure uses the model itself. The
    cache file is named by a digest of the model's files, so another model never reads it.
    """

    def __init__(self, model: Any, cache_dir: Path, models_dir: Path) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        marker = models_dir / "all-MiniLM-L6-v2-int8" / "hippograph-model.json"
        tag = hashlib.sha256(marker.read_bytes() if marker.exists() else model.name.encode()).hexdigest()[:16]
        self.path = cache_dir / f"vectors-{tag}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        self.loaded = len(self.vectors)
        self._from_file = set(self.vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.model.embed(missing), strict=True))
        self.misses += len(missing)
        self.hits += sum(text in self._from_file for text in dict.fromkeys(texts))
        if not texts:
            return self.model.embed(texts)
        return np.stack([self.vectors[t] for t in texts])

    def save(self) -> None:
        if len(self.vectors) == self.loaded:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial.npz")
        texts = list(self.vectors)
        with partial.open("wb") as out:
            np.savez(out, texts=np.array(texts), vectors=np.stack([self.vectors[t] for t in texts]))
        os.replace(partial, self.path)


# ----------------------------------------------------------------- the worker (one size)


def open_memory(data_dir: Path, models_dir: Path, embedder: Any) -> Any:
    from hippograph.config import Settings
    from hippograph.service.memory import Memory

    options: dict[str, Any] = {"data_dir": data_dir, "models_dir": models_dir}
    if "maintenance_interval_s" in Settings.model_fields:
        options["maintenance_interval_s"] = 0
    return Memory.open(Settings(**options), embedder=embedder)


def fixed_list_matrix(column: Any) -> np.ndarray:
    """A pyarrow column of fixed-size float lists as an (n, dim) float32 matrix."""
    flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(len(column), -1)


def table_vectors(table: Any) -> np.ndarray:
    data = table.search().select(["vector"]).limit(None).to_arrow()
    return fixed_list_matrix(data.column("vector"))


def measure_floor(memory: Any, qs: Sequence[Query]) -> dict[str, Any]:
    """The floor, same process, same table: model alone, bare LanceDB, exact numpy top-k."""
    from hippograph.store.vectors import Filter

    table = memory.vectors._tables["facts"]
    matrix = table_vectors(table)
    embed = memory.embedder.embed
    for q in qs[:5]:
        table.search(embed([q.text])[0]).limit(10).to_list()
    embed_ms, lance_ms, numpy_ms, pipeline_ms, numpy_pipeline_ms, shaped_ms = [], [], [], [], [], []
    where = Filter(statuses=("staged", "confirmed"), scopes=("global",))
    for q in qs:
        t0 = time.perf_counter()
        vec = embed([q.text])[0]
        t1 = time.perf_counter()
        table.search(vec).limit(10).to_list()
        t2 = time.perf_counter()
        scores = matrix @ vec
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]
        t3 = time.perf_counter()
        memory.vectors.vector_search("facts", vec, 40, where)
        t4 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000)
        lance_ms.append((t2 - t1) * 1000)
        numpy_ms.append((t3 - t2) * 1000)
        shaped_ms.append((t4 - t3) * 1000)
        pipeline_ms.append((t2 - t0) * 1000)
        numpy_pipeline_ms.append((t1 - t0 + t3 - t2) * 1000)
    return {
        "embed_one": pct(embed_ms),
        "lance_bare": pct(lance_ms),
        "numpy_topk": pct(numpy_ms),
        "lance_as_ours": pct(shaped_ms),
        "floor_pipeline": pct(pipeline_ms),
        "numpy_pipeline": pct(numpy_pipeline_ms),
        "vectors_in_table": int(matrix.shape[0]),
    }


def embed_batch_throughput(embedder: Any, facts: Sequence[GenFact]) -> dict[str, Any]:
    texts = [f.content for f in facts[:EMBED_BATCH_TEXTS]]
    embedder.embed(texts[:64])
    t0 = time.perf_counter()
    for s in range(0, len(texts), 64):
        embedder.embed(texts[s : s + 64])
    seconds = time.perf_counter() - t0
    return {
        "texts": len(texts),
        "batch": 64,
        "seconds": round(seconds, 3),
        "texts_per_s": round(len(texts) / seconds, 1),
    }


@contextlib.contextmanager
def stage_timer(memory: Any) -> Iterator[dict[str, list[float]]]:
    """Wrap the store methods search/recall/remember call, to time each stage (bench-side only)."""
    stages: dict[str, list[float]] = {}
    patched: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                stages.setdefault(label, []).append((time.perf_counter() - t0) * 1000)

        setattr(owner, attr, timed_call)
        patched.append((owner, attr, original))

    vectors, graph, retriever = memory.vectors, memory.graph, memory.retriever
    for owner, attr, label in (
        (memory.embedder, "embed", "embedder.embed"),
        (vectors, "vector_search", "vectors.vector_search"),
        (vectors, "text_search", "vectors.text_search"),
        (retriever, "_visible", "retriever._visible (graph: allowed ids)"),
        (vectors, "add", "vectors.add"),
        (vectors, "set_status", "vectors.set_status"),
        (retriever, "anchors", "retriever.anchors"),
        (retriever, "expand", "retriever.expand (graph walk)"),
        (graph.read, "fact_edges", "graph.read.fact_edges"),
        (graph.read, "about_edges", "graph.read.about_edges"),
        (graph.read, "tag_neighbours", "graph.read.tag_neighbours"),
        (graph.read, "facts_about", "graph.read.facts_about"),
        (graph.read, "entity_relations", "graph.read.entity_relations"),
        (graph, "get_facts", "graph.get_facts"),
        (graph.read, "entity_names_for", "graph.read.entity_names_for"),
        (graph, "active_facts_with", "graph.active_facts_with (conflicts)"),
        (graph.read, "last_facts_in_sessions", "graph.read.last_facts_in_sessions"),
        (graph, "insert_facts", "graph.insert_facts"),
        (graph, "insert_entities", "graph.insert_entities"),
        (graph, "touch_entities", "graph.touch_entities"),
        (graph, "link_about_many", "graph.link_about_many"),
        (graph, "link_entities_many", "graph.link_entities_many"),
        (graph, "tag_facts", "graph.tag_facts"),
        (graph, "link_facts_many", "graph.link_facts_many"),
        (graph, "update_fact_states", "graph.update_fact_states"),
        (memory.accesses, "append", "accesses.append"),
    ):
        if hasattr(owner, attr):
            wrap(owner, attr, label)
    try:
        yield stages
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)


def stage_report(title: str, stages: dict[str, list[float]], calls: int, total_ms: float) -> str:
    lines = [f"### {title}: {calls} calls, {total_ms / calls:.1f} ms per call (wall, stage timers on)", ""]
    lines.append(f"{'stage':<44}{'ms/call':>9}{'share':>8}{'calls/call':>12}{'p95 ms/stage':>14}")
    for label, values in sorted(stages.items(), key=lambda kv: -sum(kv[1])):
        per_call = sum(values) / calls
        share = 100.0 * sum(values) / total_ms if total_ms else 0.0
        p95 = float(np.percentile(values, 95))
        lines.append(f"{label:<44}{per_call:>9.2f}{share:>7.1f}%{len(values) / calls:>12.1f}{p95:>14.2f}")
    lines.append("(nested stages overlap: retriever.expand includes the graph.* calls it makes)")
    return "\n".join(lines)


def profile_paths(
    memory: Any, qs: Sequence[Query], extra: Sequence[GenFact], times: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    """Stage timers, then pyinstrument, over search, recall and remember at this size.

    Returns the report and, per path, its ms per call and each stage's ms per call.
    """
    out = io.StringIO()
    summary: dict[str, Any] = {}
    runs: list[tuple[str, Callable[[Any], Any], Sequence[Any]]] = [
        ("search (graph on)", lambda q: memory.search(q.text, limit=10), qs),
        ("recall (graph on)", lambda q: memory.recall(q.text, budget_tokens=1000), qs),
        (
            "remember",
            lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])),
            list(zip(extra[: len(extra) // 2], times, strict=False)),
        ),
    ]
    for title, fn, items in runs:
        with stage_timer(memory) as stages:
            t0 = time.perf_counter()
            for item in items:
                fn(item)
            total = (time.perf_counter() - t0) * 1000
        out.write(stage_report(title, stages, len(items), total) + "\n\n")
        summary[title] = {
            "ms_per_call": round(total / len(items), 2),
            "stages": {
                label: {
                    "ms_per_call": round(sum(v) / len(items), 2),
                    "calls_per_call": round(len(v) / len(items), 1),
                }
                for label, v in sorted(stages.items(), key=lambda kv: -sum(kv[1]))
            },
        }
    try:
        from pyinstrument import Profiler
    except ImportError:
        out.write("pyinstrument is not installed: pip install pyinstrument for the call-tree profile\n")
        return out.getvalue(), summary
    prof_runs = [
        ("search (graph on)", lambda q: memory.search(q.text, limit=10), qs),
        ("recall (graph on)", lambda q: memory.recall(q.text, budget_tokens=1000), qs),
        (
            "remember",
            lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])),
            list(zip(extra[len(extra) // 2 :], times[len(extra) // 2 :], strict=True)),
        ),
    ]
    for title, fn, items in prof_runs:
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for item in items:
            fn(item)
        profiler.stop()
        text = profiler.output_text(unicode=False, color=False, show_all=False, short_mode=False)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        out.write(f"### pyinstrument: {title}, {len(items)} calls\n\n" + "\n".join(lines[:90]) + "\n\n")
    return out.getvalue(), summary


_IMPORTS = "import hippograph.sharing.shared, hippograph.mcp_app, fastembed, lancedb"
_MODEL_ONLY = """
import os, sys
from pathlib import Path
from hippograph.config import DEFAULT_MODEL
from hippograph.store.embed import FastEmbedder
FastEmbedder(DEFAULT_MODEL, Path(sys.argv[1])).embed(["one query"])
print([int(l.split()[1]) // 1024 for l in open(f"/proc/{os.getpid()}/status") if l.startswith("VmHWM")][0])
"""


def isolated_costs(models_dir: Path) -> dict[str, Any]:
    """What parts cost alone, each in a fresh interpreter: importing the server's modules (the
    floor of a cold start), and the peak RSS of a process that only loads the model and embeds."""
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _IMPORTS], check=True, capture_output=True)
        seconds.append(time.perf_counter() - t0)
    model = subprocess.run(
        [sys.executable, "-c", _MODEL_ONLY, str(models_dir)], check=True, capture_output=True, text=True
    )
    return {
        "python_and_imports_s": round(statistics.median(seconds), 2),
        "model_only_peak_rss_mb": int(model.stdout.strip().splitlines()[-1]),
    }


def worker(args: argparse.Namespace) -> dict[str, Any]:
    from hippograph.config import DEFAULT_MODEL
    from hippograph.store.embed import FastEmbedder

    size = args.worker
    data_dir = args.work_dir / f"store-{size}"
    shutil.rmtree(data_dir, ignore_errors=True)
    t_load = time.perf_counter()
    embedder = FastEmbedder(DEFAULT_MODEL, args.models_dir)
    result: dict[str, Any] = {"size": size, "model_load_s": round(time.perf_counter() - t_load, 2)}
    extra_n = REMEMBER_SAMPLES + PROFILE_REMEMBERS + MCP_REMEMBER_SAMPLES
    stream = corpus(size + extra_n, args.seed)
    facts, extra = stream[:size], stream[size:]
    times = event_times(size + extra_n, total=size)
    # New facts for the remember samples, the profile and the MCP calls: the stream's continuation.
    cut1, cut2 = REMEMBER_SAMPLES, REMEMBER_SAMPLES + PROFILE_REMEMBERS
    rem_facts, rem_times = extra[:cut1], times[size : size + cut1]
    prof_facts, prof_times = extra[cut1:cut2], times[size + cut1 : size + cut2]
    mcp_facts, mcp_times = extra[cut2:], times[size + cut2 :]
    qs = queries(args.queries, args.seed)
    result["corpus"] = {
        "facts": size,
        "sessions": len({f.session_id for f in facts}),
        "causes": sum(f.cause is not None for f in facts),
        "with_spo": sum(f.subject is not None for f in facts),
        "kinds": {k: sum(f.kind == k for f in facts) for k in sorted({f.kind for f in facts})},
        "distinct_entities": len({e for f in facts for e in f.entities}),
        "mean_chars": round(statistics.fmean(len(f.content) for f in facts), 1),
    }
    before = embed_batch_throughput(embedder, stream)
    log(f"  embedding model batch throughput: {before['texts_per_s']} texts/s")

    # 1. build
    cached = (
        CachedEmbedder(embedder, args.vector_cache, args.models_dir)
        if args.vector_cache and size > CACHE_ABOVE
        else None
    )
    memory = open_memory(data_dir, args.models_dir, cached or embedder)
    log(f"size {size}: building by remember_many" + (f" ({cached.loaded} vectors cached)" if cached else ""))
    try:
        result["build"] = build(memory, facts, times)
    finally:
        memory.close()
    if cached is not None:
        cached.save()
        result["build"]["vectors_cached"] = cached.hits
        result["build"]["vectors_embedded"] = cached.misses
        if cached.hits:  # not the model's pace: no bulk-import figure from this size
            result["build"]["facts_per_s_with_cached_vectors"] = result["build"].pop("facts_per_s")
    log(f"  built in {result['build']['seconds']} s ({result['build'].get('facts_per_s')} facts/s)")
    # Again after the build: the machine's load moves, and the bulk ratio needs both sides alike.
    after = embed_batch_throughput(embedder, stream)
    result["embed_batch"] = {
        **before,
        "texts_per_s_before_build": before["texts_per_s"],
        "texts_per_s_after_build": after["texts_per_s"],
        "texts_per_s": round((before["texts_per_s"] + after["texts_per_s"]) / 2, 1),
    }
    log(f"  embedding model batch throughput after the build: {after['texts_per_s']} texts/s")

    # 2. reopen, as a restarted server would see it
    open_profile = None
    if args.profile:
        with contextlib.suppress(ImportError):
            from pyinstrument import Profiler

            open_profile = Profiler(interval=0.001)
            open_profile.start()
    t0 = time.perf_counter()
    memory = open_memory(data_dir, args.models_dir, embedder)
    result["reopen_s"] = round(time.perf_counter() - t0, 2)
    if open_profile is not None:
        open_profile.stop()
    try:
        result["stats"] = {
            k: v for k, v in memory.stats().items() if k not in ("by_scope", "last_maintenance", "disk_bytes")
        }
        # What a running server does in the background (the ANN index above 20k facts), before timing.
        t0 = time.perf_counter()
        memory.tune_indexes()
        result["tune_indexes_s"] = round(time.perf_counter() - t0, 2)
        for q in qs[:5]:
            memory.search(q.text, limit=10)
            memory.recall(q.text, budget_tokens=1000)

        # 3. warm latency, ours (each phase: all queries, or stop past --phase-seconds with >= 30 samples)
        cap = args.phase_seconds
        log(f"  search/recall x {len(qs)} queries, graph on and off")
        failed: dict[str, int] = {}
        degraded_notes: set[str] = set()

        def checked(phase: str, call: Callable[[Query], Any]) -> Callable[[Query], Any]:
            # A search that degraded (e.g. "graph expansion failed ...") still answers: count it.
            def run(q: Query) -> None:
                out = call(q)
                bad = [note for note in getattr(out, "notes", ()) if "fail" in note]
                if bad:
                    failed[phase] = failed.get(phase, 0) + 1
                    degraded_notes.update(bad)

            return run

        def search(q: Query) -> Any:
            return memory.search(q.text, limit=10)

        def recall(q: Query) -> Any:
            return memory.recall(q.text, budget_tokens=1000)

        for phase, call, graph_on in (
            ("search_graph", search, True),
            ("recall_graph", recall, True),
            ("search_nograph", search, False),
            ("recall_nograph", recall, False),
        ):
            memory.retriever.with_policy(graph=graph_on)
            result[phase] = pct(timed(checked(phase, call), qs, cap))
        memory.retriever.with_policy(graph=True)
        result["degraded"] = failed
        result["degraded_notes"] = sorted(degraded_notes)
        if failed:
            log(f"  degraded answers (a note says something failed): {failed}")

        # 4. floor
        log("  floor: model alone, bare LanceDB, numpy top-k")
        result["floor"] = measure_floor(memory, qs)

        # profile (largest size), before the remember samples so the store is still size N for reads
        if args.profile:
            log("  profiling search, recall and remember")
            report, result["stages"] = profile_paths(memory, qs[: min(len(qs), 10)], prof_facts, prof_times)
            result["isolated"] = isolated_costs(args.models_dir)
            if open_profile is not None:
                text = open_profile.output_text(unicode=False, color=False, show_all=False)
                lines = [ln for ln in text.splitlines() if ln.strip()][:60]
                report += f"### pyinstrument: Memory.open of the built store ({result['reopen_s']} s)\n\n"
                report += "\n".join(lines) + "\n"
            args.profile.write_text(
                f"# hippograph perf profile at {size} facts ({datetime.now(UTC).isoformat()[:19]}Z)\n"
                f"# load average at start: {os.getloadavg()}\n\n{report}"
            )

        # remember, service path
        log(f"  remember x {REMEMBER_SAMPLES} (service path)")
        pairs = list(zip(rem_facts, rem_times, strict=True))
        result["remember"] = pct(
            timed(
                lambda pair: memory.remember(pair[0].content, **remember_kwargs(pair[0], pair[1])), pairs, cap
            )
        )
    finally:
        memory.close()
    result["worker_peak_rss_mb"] = round(peak_rss_mb(), 1)

    # 5. disk
    facts_now = size + REMEMBER_SAMPLES + (PROFILE_REMEMBERS if args.profile else 0)
    disk = du_bytes(data_dir)
    graph_bytes = sum(
        du_bytes(p) if p.is_dir() else p.stat().st_blocks * 512 for p in data_dir.glob("graph.kuzu*")
    )
    vectors_bytes = du_bytes(data_dir / "vectors")
    result["disk"] = {
        "bytes": disk,
        "apparent_bytes": apparent_bytes(data_dir),
        "graph_bytes": graph_bytes,
        "vectors_bytes": vectors_bytes,
        "facts": facts_now,
        "bytes_per_fact": round(disk / facts_now, 1),
        "graph_bytes_per_fact": round(graph_bytes / facts_now, 1),
        "vectors_bytes_per_fact": round(vectors_bytes / facts_now, 1),
        "vector_versions": len(list((data_dir / "vectors").glob("*.lance/_versions/*"))),
    }

    # 6. MCP: cold start, remember and search through the tools
    if args.mcp:
        import anyio

        try:
            result["mcp"] = anyio.run(mcp_phase, data_dir, args.models_dir, qs, mcp_facts, mcp_times)
        except Exception as err:
            log(f"  MCP phase failed: {type(err).__name__}: {err}")
            result["mcp"] = {"error": f"{type(err).__name__}: {err}"}
    if not args.keep:
        shutil.rmtree(data_dir, ignore_errors=True)
    return result


# ----------------------------------------------------------------- MCP client


def server_env(data_dir: Path, models_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(data_dir)),
        "HIPPOGRAPH_DATA_DIR": str(data_dir),
        "HIPPOGRAPH_MODELS_DIR": str(models_dir),
        "HIPPOGRAPH_LOG_LEVEL": "WARNING",
    }


def child_pid(match: Callable[[str], bool]) -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(Exception):
            if match(" ".join(child.cmdline())):
                return int(child.pid)
    return None


@contextlib.asynccontextmanager
async def stdio_session(
    command: str, args: Sequence[str], env: dict[str, str], errlog: Any, timeout: float = 120
) -> AsyncIterator[Any]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=list(args), env=env)
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(timeout):
            await session.initialize()
        yield session


async def call_tool(session: Any, tool: str, timeout: float = 120, **arguments: Any) -> Any:
    import anyio

    with anyio.fail_after(timeout):
        result = await session.call_tool(tool, arguments)
    if result.is_error:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{tool} failed: {text[:300]}")
    return result


async def mcp_phase(
    data_dir: Path, models_dir: Path, qs: Sequence[Query], extra: Sequence[GenFact], times: Sequence[str]
) -> dict[str, Any]:
    env = server_env(data_dir, models_dir)
    cold: list[dict[str, float]] = []
    out: dict[str, Any] = {}
    errlog_path = data_dir.parent / f"server-{data_dir.name}.log"
    with errlog_path.open("a") as errlog:
        for k in range(COLD_STARTS):
            last = k == COLD_STARTS - 1
            t0 = time.perf_counter()
            async with stdio_session(sys.executable, ["-m", "hippograph", "serve"], env, errlog) as session:
                t_init = time.perf_counter() - t0
                await call_tool(session, "search", query=qs[k % len(qs)].text, limit=10)
                t_first = time.perf_counter() - t0
                cold.append({"initialize_s": round(t_init, 3), "first_search_s": round(t_first, 3)})
                log(f"  cold start {k + 1}: initialize {t_init:.2f} s, first search answered {t_first:.2f} s")
                if last:
                    pid = child_pid(lambda cmd: "hippograph" in cmd and "serve" in cmd)
                    rss: dict[str, Any] = {"after_first_search": vm_status(pid)}
                    remember_ms = []
                    t_remembers = time.perf_counter()
                    for fact, when in zip(extra[:MCP_REMEMBER_SAMPLES], times, strict=False):
                        kwargs = {k2: v for k2, v in remember_kwargs(fact, when).items() if v is not None}
                        t1 = time.perf_counter()
                        await call_tool(session, "remember", content=fact.content, **kwargs)
                        remember_ms.append((time.perf_counter() - t1) * 1000)
                        if len(remember_ms) >= 30 and time.perf_counter() - t_remembers > 90:
                            break
                    rss["after_remembers"] = vm_status(pid)
                    search_ms = []
                    degraded = 0
                    t_searches = time.perf_counter()
                    for q in qs[:MCP_SEARCH_SAMPLES]:
                        t1 = time.perf_counter()
                        answer = await call_tool(session, "search", query=q.text, limit=10)
                        search_ms.append((time.perf_counter() - t1) * 1000)
                        notes = (answer.structured_content or {}).get("notes") or []
                        bad = [str(n) for n in notes if "fail" in str(n)]
                        degraded += bool(bad)
                        if bad:
                            out.setdefault("degraded_notes", sorted({*out.get("degraded_notes", []), *bad}))
                        if len(search_ms) >= 10 and time.perf_counter() - t_searches > 30:
                            break
                    out["remember"] = pct(remember_ms)
                    out["search"] = pct(search_ms)
                    out["search_degraded"] = degraded
                    out["server_pid_found"] = pid is not None
                    rss["after_searches"] = vm_status(pid)
                    out["server_rss_mb"] = rss
                    out["server_peak_rss_mb"] = get(rss, "after_searches.peak")
    out["cold_starts"] = cold
    out["cold_start_s"] = round(statistics.median(c["first_search_s"] for c in cold), 3)
    out["initialize_s"] = round(statistics.median(c["initialize_s"] for c in cold), 3)
    return out


# ----------------------------------------------------------------- orchestration


def fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if unit == "B":
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def get(d: dict[str, Any] | None, path: str) -> Any:
    cur: Any = d
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def ratio(a: Any, b: Any) -> float | None:
    if a is None or b is None or not b:
        return None
    return float(a) / float(b)


# (label, path in a size result, unit, target key or None, growth checked?)
ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("remember p50 (service)", "remember.p50", "ms", "remember.p50", True),
    ("remember p95 (service)", "remember.p95", "ms", "remember.p95", True),
    ("remember p99 (service)", "remember.p99", "ms", None, True),
    ("remember p50 (MCP tool, stdio)", "mcp.remember.p50", "ms", None, True),
    ("remember p95 (MCP tool, stdio)", "mcp.remember.p95", "ms", None, True),
    ("remember p99 (MCP tool, stdio)", "mcp.remember.p99", "ms", None, True),
    ("search p50, graph on", "search_graph.p50", "ms", "search_graph.p50", True),
    ("search p95, graph on", "search_graph.p95", "ms", "search_graph.p95", True),
    ("search p99, graph on", "search_graph.p99", "ms", None, True),
    ("search p50, graph off", "search_nograph.p50", "ms", None, True),
    ("search p95, graph off", "search_nograph.p95", "ms", None, True),
    ("search p99, graph off", "search_nograph.p99", "ms", None, True),
    ("search p50 (MCP tool, stdio)", "mcp.search.p50", "ms", None, True),
    ("recall p50, graph on", "recall_graph.p50", "ms", None, True),
    ("recall p95, graph on", "recall_graph.p95", "ms", "recall_graph.p95", True),
    ("recall p99, graph on", "recall_graph.p99", "ms", None, True),
    ("recall p50, graph off", "recall_nograph.p50", "ms", None, True),
    ("recall p95, graph off", "recall_nograph.p95", "ms", None, True),
    ("recall p99, graph off", "recall_nograph.p99", "ms", None, True),
    ("floor: embed one query p50", "floor.embed_one.p50", "ms", None, False),
    ("floor: embed one query p95", "floor.embed_one.p95", "ms", None, False),
    ("floor: bare LanceDB top-10 p50", "floor.lance_bare.p50", "ms", None, False),
    ("floor: bare LanceDB top-10 p95", "floor.lance_bare.p95", "ms", None, False),
    ("floor: numpy exact top-10 p50", "floor.numpy_topk.p50", "ms", None, False),
    ("floor: numpy exact top-10 p95", "floor.numpy_topk.p95", "ms", None, False),
    ("floor pipeline (embed + bare LanceDB) p50", "floor.floor_pipeline.p50", "ms", None, False),
    ("floor pipeline (embed + bare LanceDB) p95", "floor.floor_pipeline.p95", "ms", None, False),
    ("LanceDB as search calls it (k=40, cosine, filter) p50", "floor.lance_as_ours.p50", "ms", None, False),
]


def derived(r: dict[str, Any]) -> dict[str, Any]:
    """Ratio rows and single figures computed from one size's result."""
    floor_p50 = get(r, "floor.floor_pipeline.p50")
    floor_p95 = get(r, "floor.floor_pipeline.p95")
    return {
        "ratio_search_p50": ratio(get(r, "search_graph.p50"), floor_p50),
        "ratio_search_p95": ratio(get(r, "search_graph.p95"), floor_p95),
        "ratio_search_nograph_p50": ratio(get(r, "search_nograph.p50"), floor_p50),
        "ratio_recall_p50": ratio(get(r, "recall_graph.p50"), floor_p50),
        "ratio_recall_p95": ratio(get(r, "recall_graph.p95"), floor_p95),
        "ratio_search_vs_numpy_p50": ratio(get(r, "search_graph.p50"), get(r, "floor.numpy_pipeline.p50")),
        "ratio_remember_p50_vs_embed": ratio(get(r, "remember.p50"), get(r, "floor.embed_one.p50")),
        "cold_start_s": get(r, "mcp.cold_start_s"),
        "initialize_s": get(r, "mcp.initialize_s"),
        "server_peak_rss_mb": get(r, "mcp.server_peak_rss_mb"),
        "worker_peak_rss_mb": get(r, "worker_peak_rss_mb"),
        "disk_bytes_per_fact": get(r, "disk.bytes_per_fact"),
        "disk_vectors_per_fact": get(r, "disk.vectors_bytes_per_fact"),
        "build_facts_per_s": get(r, "build.facts_per_s"),
        "reopen_s": get(r, "reopen_s"),
    }


EXTRA_ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("ratio: search p50 / floor pipeline p50", "ratio_search_p50", "x", None, False),
    ("ratio: search p95 / floor pipeline p95", "ratio_search_p95", "x", None, False),
    ("ratio: search (graph off) p50 / floor p50", "ratio_search_nograph_p50", "x", None, False),
    ("ratio: recall p50 / floor pipeline p50", "ratio_recall_p50", "x", None, False),
    ("ratio: recall p95 / floor pipeline p95", "ratio_recall_p95", "x", None, False),
    ("ratio: search p50 / (embed + numpy top-k) p50", "ratio_search_vs_numpy_p50", "x", None, False),
    ("ratio: remember p50 / embed one p50", "ratio_remember_p50_vs_embed", "x", None, False),
    ("cold start to first answered search (s)", "cold_start_s", "s", "cold_start_s", True),
    ("  of which: spawn to MCP initialize (s)", "initialize_s", "s", None, False),
    ("Memory.open of the built store, in-process (s)", "reopen_s", "s", None, False),
    ("peak RSS, server process (MB)", "server_peak_rss_mb", "MB", "server_peak_rss_mb", False),
    ("peak RSS, bench worker incl. corpus and floor (MB)", "worker_peak_rss_mb", "MB", None, False),
    ("disk bytes per fact (du, data dir)", "disk_bytes_per_fact", "B", "disk_bytes_per_fact", False),
    ("  of which LanceDB bytes per fact", "disk_vectors_per_fact", "B", None, False),
    ("bulk import (build by remember_many), facts/s", "build_facts_per_s", "/s", None, False),
]


def md_row(*cells: Any) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


PEER_TITLES = {
    ("server-memory", "remember"): "remember ≈ add_observations (1 fact)",
    ("server-memory", "search"): "search ≈ search_nodes (key term)",
    ("kuzu-memory", "remember"): "remember",
    ("kuzu-memory", "search"): "search ≈ attach_memories",
}


def table_markdown(results: list[dict[str, Any]], peers: dict[str, Any] | None) -> tuple[str, list[dict]]:
    """The one table: a row per metric, a column per size, growth, target and verdict."""
    sizes = [r["size"] for r in results]
    flat = [{**r, **derived(r)} for r in results]
    two = len(sizes) >= 2
    pairs = list(itertools.pairwise(range(len(sizes))))
    growth_heads = [f"x {size_label(sizes[a])}→{size_label(sizes[b])}" for a, b in pairs] or ["growth"]
    growth_head = growth_heads[-1]
    head = ["metric", *map(size_label, sizes), *growth_heads, f"target ({size_label(sizes[-1])})", "met?"]
    lines = [md_row(*head), "|" + "---|" * len(head)]
    verdicts: list[dict] = []
    blank = [""] * (len(sizes) + len(growth_heads) - 1)
    for label, path, unit, target_key, growth_checked in ROWS + EXTRA_ROWS:
        values = [get(r, path) for r in flat]
        if all(v is None for v in values):
            continue
        early = [ratio(values[b], values[a]) for a, b in pairs[:-1]]
        early_cells = [f"{g:.2f}x" if g is not None else "–" for g in early]
        growth = ratio(values[-1], values[-2]) if two else None
        growth_cell = "–"
        if growth is not None:
            growth_cell = f"{growth:.2f}x"
            if growth_checked and unit in ("ms", "s"):
                ok = growth <= GROWTH_TARGET
                growth_cell += " ✓" if ok else " ✗"
                verdicts.append(
                    {
                        "metric": f"growth {growth_head}: {label}",
                        "value": round(growth, 3),
                        "target": GROWTH_TARGET,
                        "met": ok,
                    }
                )
        target_cell = met_cell = ""
        if target_key:
            limit, t_unit = TARGETS[target_key]
            target_cell = f"<= {fmt(limit, t_unit)} {t_unit}"
            if values[-1] is not None:
                ok = values[-1] <= limit
                met_cell = "yes" if ok else f"**no** ({values[-1] / limit:.1f}x)"
                verdicts.append({"metric": label, "value": values[-1], "target": limit, "met": ok})
        cells = [fmt(v, unit) for v in values]
        lines.append(md_row(label, *cells, *early_cells, growth_cell, target_cell, met_cell))
    embed_rates = [get(r, "embed_batch.texts_per_s") for r in results]
    growth_blanks = [""] * len(growth_heads)
    if any(embed_rates):
        label = "floor: embedding model alone, calls of 64 texts (texts/s, mean of before/after the build)"
        lines.append(md_row(label, *(fmt(v) if v else "–" for v in embed_rates), *growth_blanks, "", ""))
    # Both sides from the same worker, so the machine's load weighs on them alike.
    shares = [ratio(get(r, "build.facts_per_s"), rate) for r, rate in zip(results, embed_rates, strict=True)]
    measured = [(size, share) for size, share in zip(sizes, shares, strict=True) if share is not None]
    if measured:
        at, share = measured[-1]
        ok = share >= BULK_TARGET
        verdict = "yes" if ok else f"**no** ({share:.0%})"
        label = "ratio: bulk import (remember_many facts/s) / model batch throughput"
        cells = [f"{v:.0%}" if v is not None else "–" for v in shares]
        lines.append(md_row(label, *cells, *growth_blanks, f">= {BULK_TARGET:.0%}", verdict))
        verdicts.append(
            {
                "metric": "bulk import / embedding batch throughput",
                "value": round(share, 3),
                "target": BULK_TARGET,
                "met": ok,
                "at_size": at,
            }
        )
    for key in ("server-memory", "kuzu-memory"):
        peer = (peers or {}).get(key)
        if peer is None:
            continue
        if peer.get("skipped"):
            lines.append(md_row(f"peer {key}: not run", peer["skipped"], *blank, "", ""))
            continue
        by_size = {int(k): v for k, v in (peer.get("sizes") or {}).items()}
        for op in ("search", "remember"):
            for stat in ("p50", "p95"):
                values = [get(by_size.get(s), f"{op}.{stat}") for s in sizes]
                if all(v is None for v in values):
                    continue
                growths = [ratio(values[b], values[a]) for a, b in pairs] or [None]
                cells = [
                    fmt(v, "ms") if v is not None else "not run (see notes)"
                    for s, v in zip(sizes, values, strict=True)
                ]
                label = f"peer {key}: {PEER_TITLES[(key, op)]} {stat} (ms)"
                growth_cells = [f"{g:.2f}x" if g else "–" for g in growths]
                lines.append(md_row(label, *cells, *growth_cells, "", ""))
    return "\n".join(lines), verdicts


def plot(results: list[dict[str, Any]], peers: dict[str, Any] | None, path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    sizes = [r["size"] for r in results]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=False)
    series = [
        ("search, graph on", "search_graph", "tab:blue"),
        ("search, graph off", "search_nograph", "tab:cyan"),
        ("recall, graph on", "recall_graph", "tab:green"),
        ("remember (service)", "remember", "tab:red"),
        ("remember (MCP)", "mcp.remember", "tab:orange"),
        ("floor: embed + bare LanceDB", "floor.floor_pipeline", "black"),
    ]
    for ax, stat in zip(axes, ("p50", "p95"), strict=True):
        for label, key, color in series:
            ys = [get(r, f"{key}.{stat}") for r in results]
            pts = [(s, y) for s, y in zip(sizes, ys, strict=True) if y is not None]
            if pts:
                style = "--" if key.startswith("floor") else "-"
                ax.plot(*zip(*pts, strict=True), style, marker="o", color=color, label=label)
        for name, key, color in (
            ("server-memory search", "server-memory", "tab:purple"),
            ("kuzu-memory search", "kuzu-memory", "tab:brown"),
        ):
            by_size = {int(k): v for k, v in ((peers or {}).get(key, {}).get("sizes") or {}).items()}
            pts = [(s, get(by_size.get(s), f"search.{stat}")) for s in sizes]
            pts = [(s, y) for s, y in pts if y is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), ":", marker="s", color=color, label=f"peer {name}")
        for target_key, color in (
            ("search_graph", "tab:blue"),
            ("recall_graph", "tab:green"),
            ("remember", "tab:red"),
        ):
            limit = TARGETS.get(f"{target_key}.{stat}")
            if limit:
                ax.axhline(limit[0], color=color, alpha=0.3, linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [size_label(s) for s in sizes])
        ax.set_xlabel("facts in the store")
        ax.set_ylabel(f"{stat} latency (ms)")
        ax.set_title(f"hippograph {stat} latency vs store size (faint lines: targets)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def notes_for(results: list[dict[str, Any]], peers: dict[str, Any] | None, meta: dict[str, Any]) -> list[str]:
    notes = []
    for r in results:
        b = r.get("build", {})
        label = size_label(r["size"])
        if b.get("vectors_cached"):
            notes.append(
                f"{label}: built by `Memory.remember_many` with {b['vectors_cached']:,} vectors the model "
                f"computed in earlier runs (cache, --vector-cache) and {b.get('vectors_embedded', 0):,} "
                f"embedded now, in {b.get('seconds')} s "
                f"({b.get('facts_per_s_with_cached_vectors')} facts/s: not a bulk-import figure). "
                "Every latency figure uses the model itself."
            )
        elif b:
            notes.append(
                f"{label}: built by `Memory.remember_many` ({b.get('facts_per_s')} facts/s, "
                f"{b.get('remember_seconds')} s in remember_many, {b.get('link_seconds')} s in link); "
                f"model alone {get(r, 'embed_batch.texts_per_s_before_build')} texts/s before the build, "
                f"{get(r, 'embed_batch.texts_per_s_after_build')} after."
            )
        st = r.get("stats", {})
        if st:
            notes.append(
                f"{label}: store holds {st.get('facts', '?')} facts, {st.get('entities', '?')} entities, "
                f"by status {st.get('by_status')}; indexed {st.get('indexed_facts')}."
            )
        d = r.get("disk") or {}
        if d:
            notes.append(
                f"{label}: disk {d['bytes_per_fact']:,.0f} B/fact = Kùzu {d['graph_bytes_per_fact']:,.0f} + "
                f"LanceDB {d['vectors_bytes_per_fact']:,.0f} (+ access log etc.), {d['facts']} facts, "
                f"{d['vector_versions']} LanceDB version files kept; apparent size {d['apparent_bytes']:,} B."
            )
        rss = get(r, "mcp.server_rss_mb") or {}
        if rss:
            steps = ", ".join(
                f"{step.replace('_', ' ')} {v.get('now')} MB (peak {v.get('peak')})"
                for step, v in rss.items()
                if v
            )
            notes.append(f"{label}: server RSS {steps}.")
        for phase, count in (r.get("degraded") or {}).items():
            n = get(r, f"{phase}.n")
            notes.append(
                f"{label}: **{count} of {n} {phase.replace('_', ' ')} calls answered degraded** "
                "(a note said something failed, e.g. graph expansion): their latency is not the full path."
            )
        if get(r, "mcp.search_degraded"):
            said = "; ".join(get(r, "mcp.degraded_notes") or [])
            notes.append(
                f"{label}: **{get(r, 'mcp.search_degraded')} of {get(r, 'mcp.search.n')} MCP search calls "
                f"answered degraded** (the server said: {said or '?'})."
            )
        if get(r, "mcp.error"):
            notes.append(f"{label}: MCP phase failed: {get(r, 'mcp.error')}")
    for name, peer in (peers or {}).items():
        if peer.get("skipped"):
            notes.append(f"Peer {name} not run: {peer['skipped']}")
        for note in peer.get("notes", []):
            notes.append(f"Peer {name}: {note}")
    code, code_end = meta.get("code") or {}, meta.get("code_end") or {}
    notes.append(
        f"Code: commit {code.get('commit')}"
        + (f", uncommitted changes in {', '.join(code['server_dirty'])}" if code.get("server_dirty") else "")
        + (
            f"; **server code changed during the run** (ended at {code_end.get('commit')}, "
            f"dirty: {code_end.get('server_dirty')}): sizes may have run different code"
            if code_end and code_end != code
            else ""
        )
        + "."
    )
    notes.append(
        f"Machine: {meta['cpus']} CPUs, load average {meta['load_start']} at start, "
        f"{meta['load_end']} at end (1, 5, 15 min); CPU pressure (PSI some, avg60) "
        f"{meta.get('cpu_pressure_start')} at start, {meta.get('cpu_pressure_end')} at end. Other processes "
        "share these cores, so absolute figures are inflated and noisy; the floor and the ratios were "
        "measured in the same process at the same time."
    )
    return notes


def _top_stages(path: Mapping[str, Any] | None, n: int = 4) -> str:
    if not path:
        return "no stage timings (run with --profile)"
    parts = [
        f"{label} {v['ms_per_call']:.1f} ms"
        + (f" ({v['calls_per_call']:g} calls)" if v["calls_per_call"] != 1 else "")
        for label, v in list(path["stages"].items())[:n]
    ]
    return f"{path['ms_per_call']:.1f} ms per call with stage timers on: " + ", ".join(parts)


def bounds_for(r: dict[str, Any], smaller: dict[str, Any] | None) -> list[str]:
    """For each missed target at the largest size: what the same run measured that bounds it."""
    label = size_label(r["size"])
    stages = r.get("stages") or {}
    iso = r.get("isolated") or {}
    floor_embed, floor_lance = get(r, "floor.embed_one.p50"), get(r, "floor.lance_bare.p50")
    lines: list[str] = []

    def missed(key: str) -> bool:
        value = derived(r).get(key, get(r, key))
        return value is not None and value > TARGETS[key][0]

    if missed("search_graph.p50") or missed("search_graph.p95"):
        lines.append(
            f"**search** ({label}, p50 {fmt(get(r, 'search_graph.p50'))} ms vs 20): the floor pipeline is "
            f"{fmt(get(r, 'floor.floor_pipeline.p50'))} ms (embed one query {fmt(floor_embed)} + one bare "
            f"LanceDB top-10 {fmt(floor_lance)}); LanceDB as search calls it (k=40, filter) "
            f"{fmt(get(r, 'floor.lance_as_ours.p50'))} ms. Search makes two LanceDB queries after the "
            f"embedding: vector (its top 120 instead of 40 when the query names a known entity, for "
            f"the entity channel) and BM25. "
            f"Stages: {_top_stages(stages.get('search (graph on)'))}."
        )
    if missed("recall_graph.p95"):
        lines.append(
            f"**recall** ({label}, p95 {fmt(get(r, 'recall_graph.p95'))} ms vs 80): search plus the "
            "narrative. "
            f"Stages: {_top_stages(stages.get('recall (graph on)'))}."
        )
    if missed("remember.p50") or missed("remember.p95"):
        lines.append(
            f"**remember** ({label}, p50 {fmt(get(r, 'remember.p50'))} / "
            f"p95 {fmt(get(r, 'remember.p95'))} ms "
            f"vs 15 / 40): embedding the fact alone is {fmt(floor_embed)} ms (p50). "
            f"Stages: {_top_stages(stages.get('remember'), 6)}."
        )
    if missed("cold_start_s"):
        lines.append(
            f"**cold start** ({label}, {fmt(get(r, 'mcp.cold_start_s'))} s vs 2): starting Python and "
            f"importing the server's modules (LanceDB, MCP, fastembed) takes "
            f"{fmt(iso.get('python_and_imports_s'))} s alone; opening the store in-process "
            f"{fmt(r.get('reopen_s'))} s (Kùzu, the graph mirror, LanceDB tables; the model loads "
            "beside them). The server answers MCP initialize before its stores open (they open in "
            f"the background): spawn to initialize {fmt(get(r, 'mcp.initialize_s'))} s."
        )
    if missed("disk_bytes_per_fact"):
        d = r.get("disk") or {}
        lines.append(
            f"**disk** ({label}, {fmt(d.get('bytes_per_fact'))} B/fact vs 4,096): Kùzu "
            f"{fmt(d.get('graph_bytes_per_fact'))} + LanceDB {fmt(d.get('vectors_bytes_per_fact'))} B/fact. "
            "LanceDB holds each fact's vector (half precision: 768 B at 384 dimensions), its text and "
            "filter columns, and the ANN index (IVF-HNSW-SQ: its graph links and 8-bit codes)."
        )
    if missed("server_peak_rss_mb"):
        rss = get(r, "mcp.server_rss_mb") or {}
        steps = ", ".join(f"{k.replace('_', ' ')} {v.get('peak')} MB" for k, v in rss.items() if v)
        lines.append(
            f"**peak RSS** ({label}, {fmt(get(r, 'mcp.server_peak_rss_mb'))} MB vs 500): a process that only "
            f"loads the embedding model and embeds one text peaks at "
            f"{fmt(iso.get('model_only_peak_rss_mb'))} MB (onnxruntime). "
            f"The server: {steps or '?'}. The rest is the graph mirror and fact cache (memory "
            "for speed), Kùzu's buffer pool and LanceDB's index cache."
        )
    if smaller is not None:
        for key, name in (("search_graph.p50", "search p50"), ("remember.p50", "remember p50")):
            a, b = get(smaller, key), get(r, key)
            lance_a, lance_b = get(smaller, "floor.lance_as_ours.p50"), get(r, "floor.lance_as_ours.p50")
            if a and b and b / a > 1.5:
                lines.append(
                    f"**growth of {name}** {size_label(smaller['size'])}→{label}: {b / a:.2f}x; LanceDB as "
                    f"search calls it grew {fmt(ratio(lance_b, lance_a))}x in the same run."
                )
    return lines


def run_worker(size: int, args: argparse.Namespace, profile: Path | None, timeout: float) -> dict[str, Any]:
    result_path = args.work_dir / f"result-{size}.json"
    cmd = [
        sys.executable,
        "-m",
        "bench.perf",
        "--worker",
        str(size),
        "--work-dir",
        str(args.work_dir),
        "--models-dir",
        str(args.models_dir),
        "--seed",
        str(args.seed),
        "--queries",
        str(args.queries),
        "--result",
        str(result_path),
        "--phase-seconds",
        str(args.phase_seconds),
        *(["--vector-cache", str(args.vector_cache)] if args.vector_cache else ["--no-vector-cache"]),
    ]
    if profile:
        cmd += ["--profile-out", str(profile)]
    if not args.mcp:
        cmd.append("--no-mcp")
    if args.keep:
        cmd.append("--keep")
    try:
        proc = subprocess.run(cmd, cwd=REPO, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"size": size, "error": f"worker for {size} facts exceeded its {timeout:.0f} s limit"}
    if proc.returncode != 0 or not result_path.exists():
        return {"size": size, "error": f"worker for {size} facts failed (exit {proc.returncode})"}
    return dict(json.loads(result_path.read_text()))


def code_state() -> dict[str, Any]:
    """The commit and any uncommitted change to server/ (other people may edit it during a run)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "server")
    return {"commit": git("rev-parse", "--short", "HEAD"), "server_dirty": dirty.splitlines()}


def versions() -> dict[str, str]:
    out = {}
    for dist in ("hippograph", "kuzu", "lancedb", "fastembed", "onnxruntime", "mcp", "numpy"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            out[dist] = importlib.metadata.version(dist)
    return out


def main_run(args: argparse.Namespace) -> int:
    from hippograph.store.embed import assemble_default_model

    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    assemble_default_model(args.models_dir)
    own_work = args.work_dir is None
    args.work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="hippograph-perf-"))
    args.work_dir.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m bench.perf", *sys.argv[1:]]),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_start": tuple(round(x, 2) for x in os.getloadavg()),
        "cpu_pressure_start": cpu_pressure(),
        "versions": versions(),
        "code": code_state(),
        "seed": args.seed,
        "queries": args.queries,
    }
    log(f"sizes {args.sizes}, {args.queries} queries, work dir {args.work_dir}, load {meta['load_start']}")
    results: list[dict[str, Any]] = []
    largest = max(args.sizes)
    profile_path = args.out / "perf_profile.txt" if args.profile else None
    try:
        for size in sorted(args.sizes):
            elapsed = time.perf_counter() - started
            # Generous: a killed worker would lose the whole size.
            timeout = max(900.0, args.budget * 3 - elapsed)
            r = run_worker(size, args, profile_path if size == largest else None, timeout)
            if "error" in r:
                log(r["error"])
            else:
                results.append(r)
        peers = None
        if args.peers:
            from bench import perf_peers

            remaining = args.budget - (time.perf_counter() - started)
            limit = max(args.peer_time, min(remaining, 600))
            log(f"peers: up to {limit:.0f} s")
            peers = perf_peers.run_peers(
                sizes=sorted(args.sizes),
                seed=args.seed,
                n_queries=min(args.queries, 100),
                work_dir=args.work_dir / "peers",
                time_limit=limit,
                peer_venv=args.peer_venv,
            )
    finally:
        if own_work and not args.keep:
            shutil.rmtree(args.work_dir, ignore_errors=True)
    meta["load_end"] = tuple(round(x, 2) for x in os.getloadavg())
    meta["cpu_pressure_end"] = cpu_pressure()
    meta["code_end"] = code_state()
    meta["run_seconds"] = round(time.perf_counter() - started, 1)
    if not results:
        log("no size finished")
        return 1
    table, verdicts = table_markdown(results, peers)
    plot_note = plot(results, peers, args.out / "perf.png")
    notes = notes_for(results, peers, meta)
    if plot_note:
        notes.append(plot_note)
    missed = [v for v in verdicts if not v["met"]]
    ordered = sorted(results, key=lambda r: r["size"])
    md = [
        "# hippograph performance at scale",
        "",
        f"`{meta['command']}` — {meta['date']}, {meta['run_seconds']:.0f} s, Python {meta['python']}, "
        f"{meta['cpus']} CPUs, seed {args.seed}, {args.queries} queries per size.",
        "",
        table,
        "",
        f"Targets missed: {len(missed)} of {len(verdicts)}."
        + ("".join(f"\n- {v['metric']}: {fmt(v['value'])} vs {fmt(v['target'])}" for v in missed)),
        "",
        "## What bounds the missed targets (measured in this run)",
        "",
        *[f"- {line}" for line in bounds_for(ordered[-1], ordered[-2] if len(ordered) > 1 else None)],
        "",
        "## Notes",
        "",
        *[f"- {n}" for n in notes],
        "",
        "![latency vs store size](perf.png)",
        "",
    ]
    text = "\n".join(md)
    (args.out / "perf.md").write_text(text)
    payload = {"meta": meta, "results": results, "peers": peers, "verdicts": verdicts, "notes": notes}
    (args.out / "perf.json").write_text(json.dumps(payload, indent=2, default=str))
    print(text)
    log(
        f"written {args.out / 'perf.md'}, perf.json, perf.png"
        + (", perf_profile.txt" if args.profile else "")
    )
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=list(DEFAULT_SIZES),
        help="store sizes, comma-separated (default 1000,10000,100000)",
    )
    parser.add_argument("--queries", type=int, default=200, help="queries per size (default 200)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results dir (default bench/results)")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True, help="run the peers")
    parser.add_argument(
        "--profile",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="profile the largest size into perf_profile.txt",
    )
    parser.add_argument(
        "--mcp",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="cold start and tool calls over stdio",
    )
    parser.add_argument("--budget", type=float, default=1200.0, help="the run's time budget in s (1200)")
    parser.add_argument("--peer-time", type=float, default=300.0, help="least seconds given to the peers")
    parser.add_argument(
        "--phase-seconds",
        type=float,
        default=60.0,
        help="a latency phase stops past this many seconds once it has 30 samples (default 60)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "hippograph-bench" / "models"
    )
    parser.add_argument(
        "--peer-venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "peer-venv",
        help="venv for kuzu-memory (created with pip if missing)",
    )
    parser.add_argument("--work-dir", type=Path, default=None, help="where stores go (default: a temp dir)")
    parser.add_argument(
        "--vector-cache",
        type=Path,
        default=DEFAULT_VECTOR_CACHE,
        help=f"vectors of earlier runs, for building stores above {CACHE_ABOVE:,} facts (default "
        f"{DEFAULT_VECTOR_CACHE}); --no-vector-cache embeds everything",
    )
    parser.add_argument("--no-vector-cache", dest="vector_cache", action="store_const", const=None)
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    # worker-only flags
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        args.profile = args.profile_out
        result = worker(args)
        args.result.write_text(json.dumps(result, indent=2, default=str))
        return 0
    return main_run(args)


if __name__ == "__main__":
    sys.exit(main())
