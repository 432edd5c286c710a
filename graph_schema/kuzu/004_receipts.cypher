// hippograph graph schema v4: exactly-once writes across an owner's crash.
// A proxied write carries a request id; the owner commits a Receipt with the write and stores its
// reply there, so a retry of the same request gets that reply instead of a second write.
// result: the reply as JSON ('' while the write is committed but its reply not yet stored).
CREATE NODE TABLE Receipt(id STRING, operation STRING, result STRING, at TIMESTAMP, PRIMARY KEY(id));
