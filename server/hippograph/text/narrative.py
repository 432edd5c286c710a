"""The recall narrative: ranked facts turned into markdown that fits a token budget.

Sections share the budget (facts grouped by entity ~40%, entity profiles ~25%,
timeline ~25%, evidence ~10%); a section's unused share passes to the next. Tokens are
estimated as ceil(characters / 4), the usual rule of thumb for English and the one the
benchmarks count with; the narrative never exceeds the budget by that count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SHARES = (("facts", 0.40), ("entities", 0.25), ("timeline", 0.25), ("evidence", 0.10))


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


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


@dataclass(frozen=True)
class Profile:
    name: str
    type: str
    summary: str
    aliases: tuple[str, ...]
    mentions: int


class _Section:
    def __init__(self, title: str, budget: int) -> None:
        self.lines = [f"## {title}"]
        self.budget = budget
        self.used = count_tokens(self.lines[0]) + 1

    def add(self, line: str) -> bool:
        cost = count_tokens(line) + 1  # +1: the newline
        if self.used + cost > self.budget:
            return False
        self.lines.append(line)
        self.used += cost
        return True

    def text(self) -> str:
        return "\n".join(self.lines) if len(self.lines) > 1 else ""


def build_narrative(
    query: str, facts: Sequence[NarrativeFact], profiles: Sequence[Profile], budget_tokens: int
) -> str:
    header = f"# Memory for: {query[:120]}"
    remaining = budget_tokens - count_tokens(header) - 1
    if remaining <= 0 or not facts:
        return header if count_tokens(header) <= budget_tokens and facts else ""
    parts = [header]
    carry = 0
    for name, share in SHARES:
        section_budget = int(remaining * share) + carry
        section = _fill(name, section_budget, facts, profiles)
        text = section.text()
        carry = section_budget - (section.used if text else 0)
        if text:
            parts.append(text)
    narrative = "\n\n".join(parts)
    # Separators between sections are not in any section's count: trim if they tip it over.
    while count_tokens(narrative) > budget_tokens and len(parts) > 1:
        parts.pop()
        narrative = "\n\n".join(parts)
    return narrative


def _fill(name: str, budget: int, facts: Sequence[NarrativeFact], profiles: Sequence[Profile]) -> _Section:
    if name == "facts":
        section = _Section("Facts", budget)
        groups: dict[str, list[NarrativeFact]] = {}
        for fact in facts:
            groups.setdefault(fact.entities[0] if fact.entities else "General", []).append(fact)
        for entity, members in groups.items():
            if not section.add(f"### {entity}"):
                break
            for fact in members:
                marker = "" if fact.status == "confirmed" else f" ({fact.status})"
                if not section.add(f"- {fact.content}{marker} [{fact.id}]"):
                    return section
        return section
    if name == "entities":
        section = _Section("Entities", budget)
        for profile in profiles:
            aka = f" (also: {', '.join(profile.aliases)})" if profile.aliases else ""
            summary = f": {profile.summary}" if profile.summary else ""
            if not section.add(
                f"- **{profile.name}**, {profile.type}{aka}, {profile.mentions} mentions{summary}"
            ):
                break
        return section
    if name == "timeline":
        section = _Section("Timeline", budget)
        dated = sorted((f for f in facts if f.when), key=lambda f: f.when or "")
        for fact in dated:
            if not section.add(f"- {fact.when}: {fact.content}"):
                break
        return section
    section = _Section("Evidence", budget)
    for fact in facts:
        detail = f"; context: {fact.evidence}" if fact.evidence else ""
        if not section.add(f"- [{fact.id}] {fact.why}{detail}"):
            break
    return section
