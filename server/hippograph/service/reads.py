"""Reads: search and recall: check the question, let retrieval rank, shape the answer.

A read changes nothing memory believes: no confidence, status, rank or usage count moves
because a fact was returned (a client reports what it used with ``mark_used``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from hippograph.domain import replies, triggers
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput, NotFound
from hippograph.domain.models import (
    ACTIVE_STATUSES,
    GLOBAL_SCOPE,
    HISTORY_STATUSES,
    EdgeType,
    Entity,
    Fact,
    FactKind,
    FactStatus,
    RecallOut,
    SearchOut,
    WarningOut,
)
from hippograph.domain.visibility import visible_scopes
from hippograph.retrieval.ranking import Lookback
from hippograph.service.shaping import measured, search_hit, why
from hippograph.service.stores import Stores
from hippograph.store.seam import EVERYWHERE, Filter, GraphView
from hippograph.text.narrative import NarrativeFact, Profile, build_narrative, least_budget
from hippograph.text.query_intent import QueryPlan, plan
from hippograph.text.time_phrases import parse_time_bound

# What an as_of look at the world shows by default: what memory holds now, and what it replaced
# (true in its time); what it was told to forget stays out unless include_history.
_TRUE_THEN = (*ACTIVE_STATUSES, FactStatus.SUPERSEDED.value)

# Rounds of measuring a recall reply and shrinking its narrative by the overshoot; the first
# usually fits (lines are priced as sent), a second covers what joining them changes.
_FIT_ROUNDS = 6

PROJECT_PREFIX = "project:"
_SCOPES_SHOWN = 10  # most known scopes a note on an empty scope names


class Reader:
    """search and recall over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        kind: str | Sequence[str] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        status: str | Sequence[str] | None = None,
        after: str | None = None,
        before: str | None = None,
        include_history: bool = False,
        as_of: str | None = None,
        known_at: str | None = None,
        detail: bool = False,
    ) -> SearchOut:
        s = self.stores.settings
        query = check.query(query, "query", max_chars=s.max_query_chars)
        count = check.limit(limit, default=10, maximum=s.max_limit)
        now = self.stores.clock()
        scopes = visible_scopes(check.scope(scope))
        asked = check.choices(status, FactStatus, "status", FactStatus.STAGED)
        lookback = None
        if as_of or known_at:
            lookback = Lookback(
                valid_at=_moment(as_of, now, "as_of"),
                known_at=_moment(known_at, now, "known_at"),
                statuses=frozenset(asked) if asked else None,
            )
            # Statuses were different then: ranking filters on the status each fact had.
            shown = HISTORY_STATUSES if asked or include_history or known_at else _TRUE_THEN
        else:
            shown = asked or (HISTORY_STATUSES if include_history else ACTIVE_STATUSES)
        where = Filter(
            statuses=shown,
            scopes=scopes,
            kinds=check.choices(kind, FactKind, "kind", FactKind.FACT),
            tags_any=list(check.tags(tags, max_count=s.max_tags_per_call)) or None,
            entity_ids_any=self._entity_filter(entity, scopes),
            after=parse_time_bound(after, now, end=False) if after else None,
            before=parse_time_bound(before, now, end=True) if before else None,
        )
        if where.after and where.before and where.after >= where.before:
            raise InvalidInput("after must be earlier than before: swap them or widen the range")
        recent = timedelta(days=self.stores.retriever.policy.recent_days)
        query_plan = plan(query, now, recent=recent)
        ranked, notes = self.stores.retriever.search(
            query, self._embed_one, where, count, query_plan, now=now, lookback=lookback
        )
        window = _window_note(query_plan, [r.reasons for r in ranked])
        notes = [*notes, window] if window else notes
        if not any(r.fact.scope == scopes[0] for r in ranked):  # else it plainly holds something
            empty = self.empty_scope_note(scopes[0])
            notes = [*notes, empty] if empty else notes
        view = self.stores.graph.view(scopes)
        names = view.entity_names_for([r.fact.id for r in ranked])
        contested = self._contested(view, [r.fact.id for r in ranked])
        replaced = self._replaced(view, [r.fact.id for r in ranked])
        results = [
            search_hit(
                r.fact,
                status=r.status.value,
                score=r.score,
                relevance=r.relevance,
                entity_names=names.get(r.fact.id, []),
                contested_by=contested.get(r.fact.id, []),
                replaces=replaced.get(r.fact.id),
                reasons=r.reasons,
                detail=detail,
            )
            for r in ranked
        ]
        return SearchOut(results=results, warnings=self._warnings(view, query), notes=notes)

    def _embed_one(self, text: str) -> np.ndarray:
        return np.asarray(self.stores.embedder.embed([text])[0])

    def recall(
        self, context: str, *, budget_tokens: int | None = None, scope: str | None = None, limit: int = 20
    ) -> RecallOut:
        s = self.stores.settings
        context = check.query(context, "context", max_chars=s.max_query_chars)
        budget = self.budget(budget_tokens)
        found = self.search(context, limit=min(limit, s.max_limit), scope=scope, detail=True)
        facts = self.stores.graph.get_facts([h.id for h in found.results])
        narrative_facts = [
            NarrativeFact(
                id=h.id,
                content=h.content,
                kind=h.kind,
                status=h.status,
                entities=tuple(h.entities),
                when=(h.event_time or "")[:10] or None,
                why=why(h.reasons),
                evidence=facts[h.id].evidence if h.id in facts else None,
                contested_by=tuple(h.contested_by),
            )
            for h in found.results
        ]
        mentioned: dict[str, Entity] = {}
        for hit in found.results:
            for name in hit.entities:
                entity = self.stores.entities.resolve(name, check.scope(scope))
                if entity is not None:
                    mentioned.setdefault(entity.id, entity)
        profiles = [
            Profile(e.name, e.type, e.summary, e.aliases, e.mention_count)
            for e in sorted(mentioned.values(), key=lambda e: -e.mention_count)
        ]
        return self._fit(context, narrative_facts, profiles, budget, found.notes, found.warnings)

    def budget(self, budget_tokens: int | None) -> int:
        """A recall's token budget: the one asked for (checked), else the default."""
        s = self.stores.settings
        budget = budget_tokens if budget_tokens is not None else s.default_budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or not 50 <= budget <= s.max_budget_tokens:
            raise InvalidInput(f"budget_tokens must be a whole number from 50 to {s.max_budget_tokens}")
        return budget

    def names(self, prefix: str, of: str, scope: str | None = None, limit: int = 20) -> list[str]:
        limit = max(0, min(limit, self.stores.settings.max_limit))
        if of == "scope":  # any scope may be named in a read (as memory://stats lists them)
            return self.stores.graph.view(EVERYWHERE).scopes(prefix, limit=limit)
        view = self.stores.graph.view(visible_scopes(check.scope(scope)))
        return view.entity_names(prefix, limit=limit)

    def empty_scope_note(self, scope: str | None, *, starting: bool = False) -> str | None:
        """If ``scope`` is a project scope that holds nothing yet (no fact or entity, of any
        status), a note saying so and naming the known scopes: a misspelt scope
        (``project:falcn``) otherwise reads and writes a new, empty memory without a word. A new
        scope is legitimate (the write still happens); global and session scopes (each session
        starts empty) get no note, nor does a scope that is not valid (the call refuses it)."""
        try:
            named = check.scope(scope)
        except InvalidInput:
            return None
        if not named.startswith(PROJECT_PREFIX):
            return None
        view = self.stores.graph.view(EVERYWHERE)
        if named in view.scopes(named, limit=self.stores.settings.max_limit):
            return None
        projects = view.scopes(PROJECT_PREFIX, limit=self.stores.settings.max_limit)
        close = difflib.get_close_matches(named, projects, n=3, cutoff=0.6)
        known = [GLOBAL_SCOPE, *close, *(p for p in projects if p not in close)]
        listed = ", ".join(known[:_SCOPES_SHOWN]) + (", …" if len(known) > _SCOPES_SHOWN else "")
        state = "held nothing before: this fact starts it" if starting else "holds nothing yet"
        return f"scope {named} {state}; known scopes: {listed}"

    def _fit(
        self,
        context: str,
        facts: Sequence[NarrativeFact],
        profiles: Sequence[Profile],
        budget: int,
        notes: list[str],
        warnings: list[WarningOut],
    ) -> RecallOut:
        """The recall reply whose whole text (as ``replies.text`` sends it) fits ``budget`` tokens.

        The narrative is priced line by line as the reply carries it (inside a JSON string); the
        rest of the reply (field names, ids, the token count itself) is measured, and the
        narrative shrinks by any overshoot until the whole fits. Shrinking drops the
        lowest-ranked facts first.
        """
        count = self.stores.embedder.count_tokens
        newline = count(replies.in_string("\n"))

        def cost(line: str) -> int:
            return count(replies.in_string(line)) + newline

        def listed(fact_id: str) -> int:
            return count(replies.text([fact_id])) - 1  # the id quoted, and a comma for the brackets

        frame = measured(RecallOut(narrative="", tokens=0, warnings=warnings, notes=notes), count)
        room = budget - frame.tokens - count(',"fact_ids":[]')
        for _ in range(_FIT_ROUNDS):
            narrative = build_narrative(context, facts, profiles, room, cost, listed)
            out = measured(
                RecallOut(
                    narrative=narrative.text,
                    fact_ids=list(narrative.fact_ids),
                    tokens=0,
                    warnings=warnings,
                    notes=notes,
                ),
                count,
            )
            if out.tokens <= budget or not narrative.text:
                break
            room -= out.tokens - budget
        if facts and not out.narrative and out.tokens <= budget:
            # Say why nothing is shown, and what budget would show the best fact.
            needs = budget - room + least_budget(context, facts[0], cost, listed)
            short = f"no fact fits budget_tokens={budget}: the best one needs about {needs}"
            noted = measured(
                RecallOut(narrative="", tokens=0, warnings=warnings, notes=[*notes, short]), count
            )
            out = noted if noted.tokens <= budget else out
        if out.tokens > budget:  # only notes left to cut: what was degraded matters less than fitting
            out = measured(RecallOut(narrative="", tokens=0, warnings=warnings), count)
        if out.tokens > budget:
            out = measured(RecallOut(narrative="", tokens=0), count)
        return out

    def _warnings(self, view: GraphView, text: str) -> list[WarningOut]:
        """The active negative memories ``view`` sees whose trigger ``text`` holds."""
        fired = triggers.fired(view.tagged(triggers.PREFIX, sorted(ACTIVE_STATUSES)), text)
        facts = self.stores.graph.get_facts(sorted({fact_id for fact_id, _ in fired}))
        shown: dict[str, WarningOut] = {}
        for fact_id, words in fired:
            fact = facts.get(fact_id)
            if fact is not None and fact.kind is FactKind.NEGATIVE and fact_id not in shown:
                shown[fact_id] = WarningOut(id=fact_id, content=fact.content, trigger=words)
        return list(shown.values())

    def _replaced(self, view: GraphView, fact_ids: Sequence[str]) -> dict[str, str]:
        """For each fact that superseded another the caller sees, the newest such one's content:
        what changed, in one line ("deploys on Tuesdays" replaces "deploys on Fridays")."""
        wanted = set(fact_ids)
        edges = [e for e in view.fact_edges(fact_ids, [EdgeType.SUPERSEDES]) if e.src in wanted]
        older = self.stores.graph.get_facts(sorted({e.dst for e in edges}))
        replaced: dict[str, Fact] = {}
        for edge in edges:
            old = older.get(edge.dst)
            if old is not None and old.status is not FactStatus.PURGED:
                kept = replaced.get(edge.src)
                if kept is None or old.created_at > kept.created_at:
                    replaced[edge.src] = old
        return {fid: old.content for fid, old in replaced.items()}

    def _contested(self, view: GraphView, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each fact, the active facts the caller sees a CONTRADICTS edge join it to (either way)."""
        edges = view.fact_edges(fact_ids, [EdgeType.CONTRADICTS])
        others = {end for edge in edges for end in (edge.src, edge.dst)}
        active = {fid for fid, status in view.statuses(others).items() if status in ACTIVE_STATUSES}
        wanted = set(fact_ids)
        found: dict[str, set[str]] = {}
        for edge in edges:
            for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                if here in wanted and there in active:
                    found.setdefault(here, set()).add(there)
        return {fid: sorted(ids) for fid, ids in found.items()}

    def _entity_filter(self, entity: str | None, scopes: Sequence[str]) -> list[str] | None:
        return None if not entity else [self.entity(entity, scopes).id]

    def entity(self, entity: str, scopes: Sequence[str]) -> Entity:
        """The entity a name, alias or id names for a caller who sees ``scopes`` (its own first),
        or NotFound."""
        name = check.text(entity, "entity", max_bytes=200)
        found = (
            self.stores.entities.get(name)
            if name.startswith("e_")
            else self.stores.entities.resolve(name, scopes[0])
        )
        if found is None or found.scope not in scopes:
            shown = check.shown(entity)
            raise NotFound(
                f"no entity is called {shown} in this scope: search(query={shown}) finds the facts "
                "that mention it"
            )
        return found


def _moment(value: str | None, now: datetime, name: str) -> datetime | None:
    """The instant a look into the past is at: a time as given, a day or period at its end."""
    if not value:
        return None
    try:
        start = parse_time_bound(value, now, end=False)
        end = parse_time_bound(value, now, end=True)
    except InvalidInput as err:
        raise InvalidInput(f"{name}: {err}") from None
    return end if start == end else end - timedelta(microseconds=1)


def _window_note(plan: QueryPlan, reasons: Sequence[Mapping[str, Any]]) -> str | None:
    """What a time phrase in the query did, when it reordered the results: facts dated inside the
    period it names came first ("who is on call this week?" ranks a fact of this week over the
    one of September that matches the words best)."""
    if not plan.time_phrase or not any("factor" in (r.get("time") or {}) for r in reasons):
        return None
    first = plan.after.date().isoformat() if plan.after else "the start"
    last = (plan.before - timedelta(microseconds=1)).date().isoformat() if plan.before else "now"
    return f'"{plan.time_phrase}" read as {first} to {last}: facts dated in it ranked first'
