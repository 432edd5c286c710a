"""The generated memory every perf figure runs on: a deterministic corpus of facts, and questions.

Also what ours and the peers both need to feed it: ``remember`` arguments of a fact, and the
kind of each entity name.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2022, 6, 1, 9, 0, tzinfo=UTC)
SPAN = timedelta(days=3 * 365)

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


def entity_types(seed: int) -> dict[str, str]:
    """Each entity name of the vocabulary for ``seed``: person, project, place, tool or topic."""
    vocab = Vocabulary(seed)
    types = {name: "person" for name in vocab.people}
    types.update({name: "project" for name in vocab.projects})
    types.update({name: "place" for name in vocab.places})
    types.update({name: "tool" for name in _TOOLS})
    types.update({name: "topic" for name in _TOPICS})
    return types
