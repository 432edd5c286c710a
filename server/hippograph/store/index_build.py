"""Building the graph index (``graph_index.GraphIndex``) from whole-table reads of the Kùzu graph.

Every fact's id, status and claim, every entity, and every edge, read as Arrow columns (~5x
faster than rows) and handed to the index's bulk loaders. An open does this only when the index
file does not match the graph (a first open, a crash, a restore); ``doctor`` does it to compare.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from hippograph.domain.models import EDGE_PROPS, FACT_EDGES
from hippograph.store.graph_index import GraphIndex
from hippograph.store.graph_values import claim_key, offset_slices
from hippograph.store.kuzu_session import KuzuSession
from hippograph.store.rows import ENTITY_COLUMNS, entity_from_row, props_by_row

log = logging.getLogger(__name__)

RELATES_PROPS = ("predicate", "weight", "fact_id", "created_at")


# Rows per whole-table read: a read's result is built in the graph's page cache, and the NEXT
# edges of 1M facts in one read filled the default 128 MiB (the mirror before the index failed so).
SLICE_ROWS = 50_000


def open_index(session: KuzuSession, index: GraphIndex, token: str) -> None:
    """Make ``index`` hold the graph of ``session``, whose Meta token is ``token``: keep the file
    if a clean close left it matching, or a killed process left it following, that graph; else
    build it. Then say it no longer matches by token, until a clean close."""
    if index.token() != token:
        if index.trust.follows(token):
            log.info("the graph index holds every commit of the graph its last process left: kept")
        else:
            build_index(session, index)
    index.begin(token)


def build_index(session: KuzuSession, index: GraphIndex) -> None:
    """Build ``index`` afresh from whole-table reads of the graph in ``session``."""
    index.build(lambda empty: _fill(session, empty))


def _slices(session: KuzuSession, match: str, returns: str) -> Iterator[dict[str, list[Any]]]:
    """The rows of ``match`` (which binds ``x``) as columns, in slices of x's offsets."""
    (last,) = session.columns(f"{match} RETURN max(offset(id(x))) AS last")["last"]
    for _, where in offset_slices(last, SLICE_ROWS):
        yield session.columns(f"{match} WHERE {where} RETURN {returns}")


def _fill(session: KuzuSession, index: GraphIndex) -> None:
    for facts in _slices(
        session,
        "MATCH (x:Fact)",
        "x.id AS id, x.status AS status, x.created_at AS t, x.subject AS subject, "
        "x.predicate AS predicate, x.scope AS scope, x.session_id AS session",
    ):
        claims = list(map(claim_key, facts["subject"], facts["predicate"], facts["scope"]))
        index.load_facts(facts["id"], facts["scope"], facts["status"], facts["t"], claims, facts["session"])
    # In the order they were made (offsets): the first made keeps a name several share.
    columns = (*ENTITY_COLUMNS, "pos")
    returns = ", ".join(f"x.{c} AS {c}" for c in ENTITY_COLUMNS) + ", offset(id(x)) AS pos"
    for entities in _slices(session, "MATCH (x:Entity)", returns):
        rows = sorted(zip(*(entities[c] for c in columns), strict=True), key=lambda row: row[-1])
        index.load_entities([entity_from_row(dict(zip(columns, row, strict=True))) for row in rows])
    for edge_type in FACT_EDGES:
        fields = ("created_at", *EDGE_PROPS[edge_type])
        props = "".join(f", x.{n} AS {n}" for n in fields)
        for cols in _slices(
            session, f"MATCH (a:Fact)-[x:{edge_type}]->(b:Fact)", f"a.id AS src, b.id AS dst{props}"
        ):
            index.load_fact_edges(edge_type, cols["src"], cols["dst"], props_by_row(cols, fields))
    # An edge's offset follows the order edges were made in: a fact's ABOUT edges keep it.
    for about in _slices(
        session,
        "MATCH (f:Fact)-[x:ABOUT]->(e:Entity)",
        "e.id AS e, f.id AS f, x.role AS role, offset(id(x)) AS pos",
    ):
        index.load_about(about["e"], about["f"], about["role"], about["pos"])
    for rel in _slices(
        session,
        "MATCH (x:Relation)",  # in the order made (offsets: a row of its own since schema v7)
        "x.src AS src, x.dst AS dst, x.predicate AS predicate, x.weight AS weight, x.fact_id AS fact_id, "
        "x.created_at AS created_at",
    ):
        index.load_relates(rel["src"], rel["dst"], props_by_row(rel, RELATES_PROPS))
    for tags in _slices(session, "MATCH (f:Fact)-[x:HAS_TAG]->(t:Tag)", "f.id AS f, t.name AS tag"):
        index.load_tags(tags["f"], tags["tag"])
