"""What a purge does to the embedded graph: a purged fact keeps its place in the chains and
loses its text, its entities, tags and the relations it stated (``KuzuGraphStore.purge_facts``).

Asked of the graph index where the graph cannot answer cheaply: which entities the facts were
about, and which tags no other fact carries (ABOUT and HAS_TAG edges are kept on the fact's side
only since schema v6). Runs inside the purge's transaction; the index and the fact cache learn
of it when it commits.
"""

from __future__ import annotations

from collections.abc import Sequence

from hippograph.domain.models import Fact
from hippograph.store.fact_cache import FactCache
from hippograph.store.graph_index import GraphIndex
from hippograph.store.index_view import EVERYWHERE, IndexView
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.rows import FACT_COLUMNS, fact_params


def erase(
    session: KuzuSession, read: GraphIndex, cache: FactCache, tombstones: Sequence[Fact], tags: Sequence[str]
) -> set[str]:
    """The fact columns set to the tombstones' (no text), their ABOUT and HAS_TAG edges and the
    RELATES edges they stated deleted; fact-to-fact edges stay (the chains). The old strings
    stay in Kùzu's free pages until ``rebuild``."""
    entities: set[str] = set()
    cast = session.types.cast
    for fact in tombstones:
        entities |= {e.dst for e in IndexView(read, EVERYWHERE).about_edges([fact.id])}
        sets = ", ".join(f"f.{c} = {cast('Fact', c).replace('r.', '$')}" for c in FACT_COLUMNS[1:])
        session.run(f"MATCH (f:Fact {{id: $id}}) SET {sets}", fact_params(fact))
        for edge in ("(f:Fact {id: $id})-[r:ABOUT]->(:Entity)", "(f:Fact {id: $id})-[r:HAS_TAG]->(:Tag)"):
            session.run(f"MATCH {edge} DELETE r", {"id": fact.id})
        session.run("MATCH (r:Relation) WHERE r.fact_id = $id DELETE r", {"id": fact.id})
    unused = IndexView(read, EVERYWHERE).tags_only_on(tags, [fact.id for fact in tombstones])
    if unused:
        # DETACH: a plain DELETE of a node edges point to asks for the edges it no longer keeps
        session.run("MATCH (t:Tag) WHERE t.name IN $names DETACH DELETE t", {"names": unused})

    def apply() -> None:
        for fact in tombstones:
            read.purge_fact(fact.id, fact.status.value)
        cache.put(tombstones)

    session.after_commit(apply)
    return entities
