// hippograph graph schema v1. Times are TIMESTAMP in UTC.
CREATE NODE TABLE Meta(key STRING PRIMARY KEY, value STRING);

CREATE NODE TABLE Entity(
    id STRING PRIMARY KEY,
    name STRING,
    name_key STRING,
    type STRING,
    aliases STRING[],
    summary STRING,
    mention_count INT64,
    first_seen TIMESTAMP,
    last_mentioned TIMESTAMP,
    scope STRING
);

CREATE NODE TABLE Fact(
    id STRING PRIMARY KEY,
    content STRING,
    kind STRING,
    status STRING,
    confidence DOUBLE,
    source STRING,
    provenance STRING,
    scope STRING,
    created_at TIMESTAMP,
    valid_from TIMESTAMP,
    valid_until TIMESTAMP,
    event_time TIMESTAMP,
    last_accessed TIMESTAMP,
    access_count INT64,
    pinned BOOLEAN,
    ttl_policy STRING,
    expires_at TIMESTAMP,
    subject STRING,
    predicate STRING,
    object STRING,
    tags STRING[],
    session_id STRING,
    evidence STRING,
    status_reason STRING
);

CREATE NODE TABLE Tag(name STRING PRIMARY KEY);

CREATE REL TABLE ABOUT(FROM Fact TO Entity, role STRING);
CREATE REL TABLE RELATES(FROM Entity TO Entity, predicate STRING, weight DOUBLE, fact_id STRING, created_at TIMESTAMP);
CREATE REL TABLE SUPERSEDES(FROM Fact TO Fact, reason STRING, created_at TIMESTAMP);
CREATE REL TABLE CONTRADICTS(FROM Fact TO Fact, created_at TIMESTAMP);
CREATE REL TABLE DERIVED_FROM(FROM Fact TO Fact, weight DOUBLE, created_at TIMESTAMP);
CREATE REL TABLE RELATES_TO(FROM Fact TO Fact, relation STRING, weight DOUBLE, created_at TIMESTAMP);
CREATE REL TABLE CAUSES(FROM Fact TO Fact, weight DOUBLE, created_at TIMESTAMP);
CREATE REL TABLE NEXT(FROM Fact TO Fact, created_at TIMESTAMP);
CREATE REL TABLE HAS_TAG(FROM Fact TO Tag);
