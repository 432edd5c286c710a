// hippograph graph schema v3: a restated fact is corroborated, not copied.
// corroborations: times stated; sources: every source that stated it (empty: just `source`);
// last_stated: when it was last stated again.
ALTER TABLE Fact ADD corroborations INT64 DEFAULT 1;
ALTER TABLE Fact ADD sources STRING[] DEFAULT [];
ALTER TABLE Fact ADD last_stated TIMESTAMP;
