// hippograph graph schema v7: a relation between two entities is a row of its own, not an edge.
//
// RELATES edges join entities, and every entity sits in the first node group of its table: all of
// a memory's relations were stored in that one group, from both ends, and a checkpoint after new
// relations of an early entity rewrote the lists of every entity made after it. With 1M relations
// among 600 entities a 32 MiB page cache could not checkpoint 500 more (64 MiB could, twice as
// many could not). As rows, relations spread over node groups in the order they were made, like
// facts. Walks from an entity to its relations were already answered by the graph index
// (graph.kuzu.index); here a relation is written, read whole (export, the index's build) and
// deleted with the fact that stated it or its entities. ``src`` and ``dst`` are entity ids: the
// write finds both entities first (store/graph.py link_entities_many).
CREATE NODE TABLE Relation(
    id STRING PRIMARY KEY,
    src STRING,
    dst STRING,
    predicate STRING,
    weight DOUBLE,
    fact_id STRING,
    created_at TIMESTAMP
);
COPY Relation FROM (
    MATCH (a:Entity)-[r:RELATES]->(b:Entity)
    RETURN CAST(gen_random_uuid() AS STRING), a.id, b.id, r.predicate, r.weight, r.fact_id, r.created_at
    ORDER BY offset(id(r))
);
DROP TABLE RELATES;
