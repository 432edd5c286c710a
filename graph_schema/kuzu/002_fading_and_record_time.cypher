// hippograph graph schema v2: record time of history, dormant facts, reads that change nothing.
//
// believed_until: when memory stopped holding a fact (superseded or forgotten); valid_until
// now means only when it stopped being true in the world. prior_status: the status it had
// until then. Before v2, valid_until held the record time of both.
ALTER TABLE Fact ADD believed_until TIMESTAMP;
ALTER TABLE Fact ADD prior_status STRING;
MATCH (f:Fact) WHERE f.status IN ['superseded', 'retracted']
SET f.believed_until = f.valid_until, f.prior_status = CASE WHEN f.pinned THEN 'confirmed' ELSE 'staged' END;
// Decay used to retract facts; now it only makes them dormant: still believed, still found.
MATCH (f:Fact) WHERE f.status = 'retracted' AND f.status_reason = 'decayed'
SET f.status = 'dormant', f.valid_until = NULL, f.believed_until = NULL, f.prior_status = NULL,
    f.status_reason = 'dormant: was retracted by decay before schema v2';
// Searches used to confirm what they returned; only evidence does now.
MATCH (f:Fact) WHERE f.status = 'confirmed' AND NOT f.pinned AND f.status_reason STARTS WITH 'promoted after'
SET f.status = 'staged', f.status_reason = 'staged again: its promotion came from searches';
// access_count counted searches; it counts reported uses now.
MATCH (f:Fact) WHERE f.access_count <> 0 SET f.access_count = 0;
// Statuses changed above: the vector index must be reconciled at this open.
MATCH (m:Meta) WHERE m.key = 'vectors_in_sync_with' SET m.value = '';
