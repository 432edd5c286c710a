"""The recall narrative: ranked facts turned into markdown that fits a token budget.

Facts come first: the best-ranked facts that fit, grouped by entity. The first fact that does
not fit ends the list, so the facts shown are always the top of the ranking, never a later one
in place of an earlier one. What the facts leave is shared by the profiles of their entities
(5/12), their timeline (5/12) and their evidence (2/12); a section's unused share passes to the
next. The caller prices a line (``cost``: its tokens and its newline, as the reply will carry
them), so the narrative fits whatever measure the reply is held to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

SHARES = (("entities", 5), ("timeline", 5), ("evidence", 2))

Cost = Callable[[str], int]


@dataclass(frozen=True)
class NarrativeFact:
    id: str
    content: str
    kind: str
    status: str
    entities: tuple[str, ...]
    when: str | None  # ISO date of event_time, if known
    why: str  # short reason: channels / graph path
    evidence: str | None = None
    contested_by: tuple[str, ...] = ()  # active facts that deny it


@dataclass(frozen=True)
class Profile:
    name: str
    type: str
    summary: str
    aliases: tuple[str, ...]
    mentions: int


@dataclass(frozen=True)
class Narrative:
    text: str
    fact_ids: tuple[str, ...]  # the facts it shows, best first


class _Section:
    def __init__(self, title: str, budget: int, cost: Cost) -> None:
        self.lines = [title]
        self.budget = budget
        self.cost = cost
        self.used = cost(title)

    def add(self, line: str) -> bool:
        price = self.cost(line)
        if self.used + price > self.budget:
            return False
        self.lines.append(line)
        self.used += price
        return True

    def text(self) -> str:
        return "\n".join(self.lines) if len(self.lines) > 1 else ""


def build_narrative(
    query: str,
    facts: Sequence[NarrativeFact],
    profiles: Sequence[Profile],
    budget_tokens: int,
    cost: Cost,
    listed: Cost = lambda fact_id: 0,
) -> Narrative:
    """The narrative within ``budget_tokens`` by ``cost``; ``listed`` prices what showing a fact
    costs beyond its line (its id in the reply's list of the facts shown)."""
    header = _header(query)
    gap = cost("")  # the blank line between sections
    left = budget_tokens - cost(header) - gap
    shown, section = _facts(facts, left, cost, listed)
    if not shown:
        return Narrative("", ())
    parts = [header, section.text()]
    left -= section.used
    names = {name for fact in shown for name in fact.entities}
    carry = 0
    total = sum(weight for _, weight in SHARES)
    for name, weight in SHARES:
        budget = max(0, left * weight // total + carry - gap)
        section = _fill(name, budget, shown, [p for p in profiles if p.name in names], cost)
        text = section.text()
        carry = budget - (section.used if text else 0) + (0 if text else gap)
        if text:
            parts.append(text)
    return Narrative("\n\n".join(parts), tuple(fact.id for fact in shown))


def least_budget(query: str, fact: NarrativeFact, cost: Cost, listed: Cost = lambda fact_id: 0) -> int:
    """The budget ``build_narrative`` needs to show ``fact`` (alone, with no other section)."""
    _, section = _facts([fact], 1 << 30, cost, listed)
    return cost(_header(query)) + cost("") + section.used


def _header(query: str) -> str:
    return f"# Memory for: {query[:120]}"


def _facts(
    facts: Sequence[NarrativeFact], budget: int, cost: Cost, listed: Cost
) -> tuple[list[NarrativeFact], _Section]:
    """The best-ranked facts that fit, and their section (grouped by each fact's first entity)."""
    section = _Section("## Facts", budget, cost)
    groups: dict[str, list[str]] = {}
    shown: list[NarrativeFact] = []
    for fact in facts:
        group = fact.entities[0] if fact.entities else "General"
        marker = "" if fact.status == "staged" else f" ({fact.status})"  # only what is not the default
        if fact.contested_by:
            marker += f" (contested by {', '.join(fact.contested_by)})"
        line = f"- {fact.content}{marker} [{fact.id}]"
        price = cost(line) + listed(fact.id) + (0 if group in groups else cost(f"### {group}"))
        if section.used + price > budget:
            break
        groups.setdefault(group, []).append(line)
        shown.append(fact)
        section.used += price
    for group, lines in groups.items():
        section.lines += [f"### {group}", *lines]
    return shown, section


def _fill(
    name: str, budget: int, facts: Sequence[NarrativeFact], profiles: Sequence[Profile], cost: Cost
) -> _Section:
    if name == "entities":
        section = _Section("## Entities", budget, cost)
        for profile in profiles:
            aka = f" (also: {', '.join(profile.aliases)})" if profile.aliases else ""
            summary = f": {profile.summary}" if profile.summary else ""
            if not section.add(
                f"- **{profile.name}**, {profile.type}{aka}, {_mentions(profile.mentions)}{summary}"
            ):
                break
        return section
    if name == "timeline":
        section = _Section("## Timeline", budget, cost)
        dated = sorted((f for f in facts if f.when), key=lambda f: f.when or "")
        for fact in dated if len(dated) > 1 else ():  # one fact has no order: it is in Facts
            if not section.add(f"- {fact.when}: {fact.content}"):
                break
        return section
    section = _Section("## Evidence", budget, cost)
    for fact in facts:
        detail = f"; context: {fact.evidence}" if fact.evidence else ""
        if not section.add(f"- [{fact.id}] {fact.why}{detail}"):
            break
    return section


def _mentions(count: int) -> str:
    return "1 mention" if count == 1 else f"{count} mentions"
