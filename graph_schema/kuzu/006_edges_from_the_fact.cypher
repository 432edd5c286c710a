// hippograph graph schema v6: a fact's ABOUT and HAS_TAG edges are stored on the fact's side only.
//
// Kùzu keeps a relationship table's edges per node group (2^17 nodes) of each end it stores them
// from. Stored from both ends, every ABOUT edge into the few hundred entities (and every HAS_TAG
// edge into the few dozen tags) sat in the one node group of its table, and a checkpoint or an
// insert that touched that group needed pool memory in proportion to all of them: at ~1M facts
// about ~600 entities the 64 MiB page cache could no longer checkpoint (issue 22). Stored from the
// fact's side, the edges spread over the facts' node groups with the facts. Walks from an entity
// or a tag to its facts were already answered by the graph index (graph.kuzu.index), never here.
// Each table is copied whole in this transaction: a graph of ~1M edges needs a ~256 MiB page
// cache for it, which a migration that does not fit is given (store/migrations.py), once.
CREATE REL TABLE ABOUT_v6(FROM Fact TO Entity, role STRING) WITH (storage_direction = 'fwd');
COPY ABOUT_v6 FROM (MATCH (f:Fact)-[r:ABOUT]->(e:Entity) RETURN f.id, e.id, r.role);
DROP TABLE ABOUT;
ALTER TABLE ABOUT_v6 RENAME TO ABOUT;
CREATE REL TABLE HAS_TAG_v6(FROM Fact TO Tag) WITH (storage_direction = 'fwd');
COPY HAS_TAG_v6 FROM (MATCH (f:Fact)-[:HAS_TAG]->(t:Tag) RETURN f.id, t.name);
DROP TABLE HAS_TAG;
ALTER TABLE HAS_TAG_v6 RENAME TO HAS_TAG;
