"""Writes: remember, remember_many and correct, each planned under the write lock, committed as one batch.

Kùzu (the source of truth) commits first, in one transaction; the vector index follows. If
the process dies between the two, the next open's reconcile re-indexes from the graph, so an
acknowledged write is never lost. Every status change goes through the lifecycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from hippograph.domain import conflicts, sameness
from hippograph.domain import lifecycle as lc
from hippograph.domain.errors import InvalidInput, NotFound
from hippograph.domain.models import (
    CorrectOut,
    EntityOut,
    Fact,
    FactKind,
    FactStatus,
    Provenance,
    RememberOut,
    SearchOut,
    SimilarFact,
    Source,
)
from hippograph.service.consolidation import join_topics
from hippograph.service.correcting import Correcting, copies_of, kept_about
from hippograph.service.entity_links import plan_entities
from hippograph.service.intake import build_fact, build_item
from hippograph.service.nearest import SHOWN, judge_nearest, nearest_stored, shown
from hippograph.service.shaping import fact_out, index_text, iso
from hippograph.service.stores import Stores
from hippograph.service.write_batch import Batch, Planned, commit
from hippograph.store.entity_index import PendingEntities
from hippograph.store.seam import EVERYWHERE, Relation, claim_key
from hippograph.text.names import Name

# Facts per write batch of remember_many: one embedding call, one graph transaction, one
# vector-index append. 128 was 12% slower on the perf corpus; 1,024 no faster.
_WRITE_BATCH = 256
# A write's texts are embedded on one of these threads while its own thread finds the names: the
# model's session lets go of the GIL while the recogniser holds it, so on 2 cores the two slowest
# steps of a remember took ~6 ms together instead of ~8 (in-process, one sentence, 2026-11-30).
_EMBEDDING = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hippograph-embed")
# Search results correct(query=...) picks from, and lists when it cannot pick.
_CANDIDATES = 5


class Writer:
    """remember, remember_many and correct over the shared stores."""

    def __init__(
        self,
        stores: Stores,
        search: Callable[..., SearchOut],
        scope_note: Callable[[str | None], str | None],
    ) -> None:
        self.stores = stores
        self._search = search  # correct(query=...) finds the fact to correct
        # remember's reply notes a project scope this fact is the first of (``project:falcn``
        # for ``project:falcon`` would otherwise start a memory without a word).
        self._scope_note = scope_note

    def remember(
        self,
        content: str,
        *,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        entities: Sequence[str] | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        confidence: float | None = None,
        source: str | None = None,
        scope: str | None = None,
        event_time: str | None = None,
        session_id: str | None = None,
        evidence: str | None = None,
        ttl: str | None = None,
        restates: str | None = None,
        triggers: Sequence[str] | None = None,
    ) -> RememberOut:
        fact, entity_names = build_fact(
            self.stores,
            content,
            kind=kind,
            tags=tags,
            entities=entities,
            subject=subject,
            predicate=predicate,
            object=object,
            confidence=confidence,
            source=source,
            scope=scope,
            event_time=event_time,
            session_id=session_id,
            evidence=evidence,
            ttl=ttl,
            triggers=triggers,
        )
        if restates is not None:
            return self._restate(fact, restates)
        note = self._scope_note(scope)
        out = self._store([(fact, entity_names)])[0]
        return out.model_copy(update={"note": note}) if note and not out.corroborated else out

    def _restate(self, statement: Fact, fact_id: str) -> RememberOut:
        """The caller says ``statement`` restates the fact ``fact_id`` of its scope: strengthen that
        fact instead of storing a new one (another scope's id is not found, as an unknown one)."""
        with self.stores.write_lock:
            old = self.stores.fact(fact_id, statement.scope)
            if old.scope != statement.scope:
                raise NotFound(
                    f"no fact has id {old.id} in {statement.scope}: restates takes a fact of the "
                    "scope the statement is remembered in"
                )
            current = self.stores.current_version(old) if old.status is FactStatus.SUPERSEDED else None
            strengthened = lc.corroborate(
                old, statement, statement.created_at, self.stores.policy, current_id=current
            )
            batch = Batch(PendingEntities(self.stores.entities), self.stores.graph.active_facts_with(set()))
            planned = self._plan_corroboration(strengthened, [], batch)
            commit(self.stores, [planned], batch, np.empty((1, 0), dtype=np.float32))
        return self._reply(planned)

    def remember_many(self, items: Sequence[Mapping[str, Any]]) -> list[RememberOut]:
        """Remember many facts, with the outcome of calling ``remember`` for each in turn, faster.

        Each item holds ``remember``'s arguments by name. Every item is checked before anything
        is written: a bad one raises an error naming it (``items[3]: content is empty ...``)
        and nothing is stored. Then each batch is embedded in one model call and written in one
        graph transaction; a fact sees the entities, session turns and conflicts of the facts
        before it, in its batch or earlier ones. Results come in input order, and only once
        their batch has committed. If a write fails, the batches before it stay stored.
        """
        built = [build_item(self.stores, i, item) for i, item in enumerate(items)]
        stored: list[RememberOut] = []
        for start in range(0, len(built), _WRITE_BATCH):
            try:
                stored += self._store(built[start : start + _WRITE_BATCH])
            except Exception as err:
                err.add_note(f"remember_many: the first {start} items were stored before this error")
                raise
        return stored

    def _store(
        self, built: Sequence[tuple[Fact, tuple[str, ...]]], *, corrects: Correcting | None = None
    ) -> list[RememberOut]:
        """Store facts made by ``_build_fact`` as one batch, with the outcome of storing them in order.

        One embedding call, one graph transaction, one vector-index append: each fact sees the
        entities, session turns, conflicts and restatements of the facts before it, as separate
        calls would.
        """
        facts = [fact for fact, _ in built]
        # A conversation turn is indexed with the turn before it; if that one turns out to be a
        # restatement (not stored), _plan embeds the turn again with the stored turn before it.
        texts = [
            index_text(fact, before[1] if before and fact.kind is FactKind.EPISODE else None)
            for fact, before in zip(facts, self.stores.sessions.before(facts), strict=True)
        ]
        embedding = _EMBEDDING.submit(self.stores.embedder.embed, texts)
        # Outside the lock: finding and typing names (~2 ms a fact, more for a new name) holds up
        # no other writer.
        contents = [fact.content for fact in facts]
        names = self.stores.typer.retype(
            contents,
            self.stores.names.find_many(contents),
            lambda i, name: self.stores.entities.resolve(name.text, facts[i].scope) is not None,
        )
        vectors = embedding.result()
        with self.stores.write_lock:
            keys = {key for fact in facts if (key := claim_key(fact.subject, fact.predicate, fact.scope))}
            batch = Batch(PendingEntities(self.stores.entities), self.stores.graph.active_facts_with(keys))
            stored = nearest_stored(self.stores, facts, vectors)
            planned = []
            for i, ((fact, given), text) in enumerate(zip(built, texts, strict=True)):
                one, vectors[i] = self._plan(
                    fact, given, names[i], text, vectors[i], stored[i], batch, corrects
                )
                planned.append(one)
            commit(self.stores, planned, batch, vectors)
            nearby = zip(planned, stored, strict=True)
            join_topics(self.stores, [(p.fact, p.previous, n) for p, n in nearby if not p.corroborated])
        return [self._reply(p, corrects) for p in planned]

    def _reply(self, p: Planned, corrects: Correcting | None = None) -> RememberOut:
        """What remember answers for one planned fact (a correction does not list what it corrects)."""
        return RememberOut(
            **fact_out(p.fact, self._names(p)).model_dump(),
            corroborated=p.corroborated,
            superseded=[old.id for old in p.superseded if corrects is None or old.id != corrects.old.id],
            contradicts=[old.id for old in p.contradicted],
            similar=p.similar,
            linked_entities=[
                EntityOut(id=e.id, name=e.name, type=e.type, created=e in p.created) for _, e in p.linked
            ],
        )

    def _names(self, planned: Planned) -> list[str]:
        if planned.corroborated:
            return self.stores.entity_names(planned.fact.id)
        return [e.name for _, e in planned.linked]

    def _plan(
        self,
        fact: Fact,
        entity_names: Sequence[str],
        found: Sequence[Name],
        text: str,
        vector: np.ndarray,
        near: Mapping[str, float],
        batch: Batch,
        corrects: Correcting | None,
    ) -> tuple[Planned, np.ndarray]:
        """What storing ``fact`` writes, given what the batch's earlier facts did (under the write
        lock), and its vector (embedded again if the text it is indexed under changed)."""
        now = fact.created_at
        previous = self._previous_turn(fact, batch)
        if fact.kind is FactKind.EPISODE:
            wanted = index_text(fact, previous[1] if previous else None)
            if wanted != text:
                text, vector = wanted, self.stores.embedder.embed([wanted])[0]
        judged = judge_nearest(self.stores, fact, vector, near, batch.states, batch.written)
        if corrects is not None:
            # A correction lists nothing and links no conflict: it supersedes the fact it names
            # and the copies of it, and a fact of the scope that already says its words (the
            # save prompt's loop: remember, see the conflict, correct) as a copy of itself. One
            # fact then holds the value, with what the corrected fact was about.
            superseded = [self._corrected(corrects.old, fact)] + [
                lc.supersede(old, now, f"restated by its correction {fact.id}")
                for old, j, _ in judged
                if j.verdict is sameness.Verdict.SAME and old.id != corrects.old.id
            ]
            copies = self.stores.graph.get_facts([i for i in corrects.copies if i not in batch.states])
            superseded += [
                lc.supersede(copy, now, f"a copy of {corrects.old.id}, corrected by {fact.id}")
                for copy in copies.values()
                if copy.status.is_active and all(copy.id != s.id for s in superseded)
            ]
            correction = self._plan_new(fact, entity_names, found, text, vector, previous, batch, superseded)
            return correction, vector
        same = next((old for old, j, _ in judged if j.verdict is sameness.Verdict.SAME), None)
        similar = [shown(old, j, similarity) for old, j, similarity in judged if old is not same][:SHOWN]
        if same is not None:
            strengthened = lc.corroborate(same, fact, now, self.stores.policy)
            return self._plan_corroboration(strengthened, similar, batch), vector
        contradicted = [old for old, j, _ in judged if j.verdict is sameness.Verdict.CONTRADICTS]
        planned = self._plan_new(
            fact, entity_names, found, text, vector, previous, batch, [], contradicted, similar
        )
        return planned, vector

    def _plan_new(
        self,
        fact: Fact,
        entity_names: Sequence[str],
        found: Sequence[Name],
        text: str,
        vector: np.ndarray,
        previous: tuple[str, str] | None,
        batch: Batch,
        superseded: list[Fact],
        contradicted: Sequence[Fact] = (),
        similar: Sequence[SimilarFact] = (),
    ) -> Planned:
        """A new fact: its entities, its edges, and the claims it resolves besides those it
        ``superseded`` already (a correction's)."""
        now = fact.created_at
        contradicted = list(contradicted)
        linked, created, retyped = plan_entities(fact, entity_names, now, batch.entities, found)
        self._resolve_claims(fact, batch, superseded, contradicted)
        subj = next((e for r, e in linked if r == "subject"), None)
        obj = next((e for r, e in linked if r == "object"), None)
        relation = None
        if subj is not None and obj is not None:
            relation = Relation(subj.id, obj.id, fact.predicate or "related_to", 1.0, fact.id, now)
        turn = previous[0] if previous else None
        planned = Planned(
            fact,
            text,
            linked,
            created,
            turn,
            superseded,
            contradicted,
            relation,
            list(similar),
            retyped=retyped,
        )
        batch.add(planned, vector)
        return planned

    def _corrected(self, corrects: Fact, correction: Fact) -> Fact:
        """``corrects`` as it is now, superseded by ``correction``."""
        current = self.stores.graph.get_fact(corrects.id)
        if current is None:
            raise NotFound(f"fact {corrects.id} no longer exists")
        newest = self.stores.current_version(current) if current.status is FactStatus.SUPERSEDED else None
        return lc.supersede(
            current,
            correction.created_at,
            f"corrected by {correction.id}",
            current_id=newest,
            valid_until=correction.event_time,
        )

    def _plan_corroboration(self, fact: Fact, similar: list[SimilarFact], batch: Batch) -> Planned:
        """A stored fact stated again, in its strengthened state: it may now supersede others."""
        superseded: list[Fact] = []
        contradicted: list[Fact] = []
        self._resolve_claims(fact, batch, superseded, contradicted)
        edges = self.stores.graph.view(EVERYWHERE).fact_edges([fact.id])
        linked = {e.dst if e.src == fact.id else e.src for e in edges}
        contradicted = [old for old in contradicted if old.id not in linked]
        planned = Planned(fact, "", [], [], None, superseded, contradicted, None, similar, corroborated=True)
        batch.add(planned, np.empty(0))
        return planned

    def _resolve_claims(
        self, fact: Fact, batch: Batch, superseded: list[Fact], contradicted: list[Fact]
    ) -> None:
        """The conflict rule against the active facts with the same subject and predicate (but
        those ``superseded`` or ``contradicted`` already)."""
        key = claim_key(fact.subject, fact.predicate, fact.scope)
        if key is None:
            return
        for old in batch.active_with(key):
            if any(old.id == c.id for c in (*superseded, *contradicted)):
                continue
            outcome = conflicts.resolve_conflict(fact, old, self.stores.policy)
            if outcome is conflicts.ConflictOutcome.SUPERSEDE:
                superseded.append(
                    lc.supersede(
                        old, fact.created_at, f"superseded by {fact.id}", valid_until=fact.event_time
                    )
                )
            elif outcome is conflicts.ConflictOutcome.CONTRADICT:
                contradicted.append(old)

    def _previous_turn(self, fact: Fact, batch: Batch) -> tuple[str, str] | None:
        """The stored fact before ``fact`` in its session: of this batch, or committed before it."""
        if fact.session_id is None:
            return None
        if (fact.scope, fact.session_id) in batch.turns:
            return batch.turns[fact.scope, fact.session_id]
        return self.stores.sessions.before([fact])[0]

    def correct(
        self,
        content: str,
        *,
        fact_id: str | None = None,
        query: str | None = None,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        object: str | None = None,
        event_time: str | None = None,
        scope: str | None = None,
        entities: Sequence[str] | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        confidence: float | None = None,
        source: str | None = None,
        evidence: str | None = None,
        ttl: str | None = None,
    ) -> CorrectOut:
        """Replace a fact ``scope`` sees (by id, or the one ``query`` names in a search from
        ``scope``) with a corrected one in the fact's own scope; the old one stays as superseded
        history."""
        if (fact_id is None) == (query is None):
            raise InvalidInput(
                "send exactly one of fact_id (from search results) or query (to find the fact)"
            )
        old = self.stores.fact(fact_id, scope) if fact_id is not None else self._the_one(query or "", scope)
        lc.check_correctable(old, self.stores.current_version(old))
        # The corrected fact keeps what the old one was about, except the value it got wrong.
        about = self.stores.graph.view(EVERYWHERE).entity_names_for([old.id]).get(old.id, [])
        if isinstance(content, str):  # else build_fact says what is wrong with it
            named = [name.text for name in self.stores.names.find(content)]
            about = kept_about(old, content, about, named)
        inherited: dict[str, Any] = {
            "kind": old.kind.value,
            "tags": list(old.tags),
            "entities": about,
            "subject": old.subject,
            "predicate": old.predicate,
            "object": None if old.predicate else old.object,
            "source": Source.USER_EDIT.value,
            "scope": old.scope,
            "event_time": iso(old.event_time),
            "session_id": None,
            "evidence": None,
            "ttl": old.ttl_policy.value,
            "confidence": None,
        }
        overrides = {
            "kind": kind,
            "tags": tags,
            "object": object,
            "event_time": event_time,
            "entities": entities,
            "subject": subject,
            "predicate": predicate,
            "confidence": confidence,
            "source": source,
            "evidence": evidence,
            "ttl": ttl,
        }
        inherited.update({k: v for k, v in overrides.items() if v is not None})
        fact, entity_names = build_fact(
            self.stores, content, provenance=Provenance.USER_CORRECTED, **inherited
        )
        correcting = Correcting(old, copies_of(self.stores, old))
        out = self._store([(lc.correction_of(fact, old), entity_names)], corrects=correcting)[0]
        return CorrectOut(**out.model_dump(), corrected=old.id)

    def _the_one(self, query: str, scope: str | None) -> Fact:
        """The one active fact ``query`` names: among the best search results, the only one that
        holds every word of the query. Anything else is an error listing the candidates."""
        hits = self._search(query, limit=_CANDIDATES, scope=scope).results
        if not hits:
            raise NotFound(f"no active fact matches {query!r}: search first, then correct by fact_id")
        named = [hit for hit in hits if sameness.answers(query, hit.content)]
        if len(named) == 1:
            return self.stores.fact(named[0].id, scope)
        listed = "; ".join(f"{hit.id} {hit.content[:80]!r}" for hit in (named or hits)[:_CANDIDATES])
        many = "at least " if len(hits) == _CANDIDATES and len(named) == len(hits) else ""  # more unread
        why = f"{many}{len(named)} facts match {query!r}" if named else f"no fact clearly matches {query!r}"
        raise InvalidInput(
            f"{why}, so nothing was corrected. Candidates: {listed}. Send fact_id= of the one to "
            "correct, or a query with words only that fact holds."
        )
