"""One memory, many processes: who owns the data dir, the owner's RPC, the proxy."""
