// hippograph graph schema v4: exactly-once writes across an owner's crash.
// A proxied write carries a request id; the owner commits a Receipt with the write, and a Reply
// (the reply as JSON) just after, so a retry of the same request gets that reply instead of a
// second write. Two tables, each written once: Kùzu 0.11.3 leaks buffer-pool pages when a long
// string property is SET again (a Receipt updated with its reply filled a 16 MiB pool in ~100 writes).
CREATE NODE TABLE Receipt(id STRING, operation STRING, at TIMESTAMP, PRIMARY KEY(id));
CREATE NODE TABLE Reply(id STRING, result STRING, at TIMESTAMP, PRIMARY KEY(id));
