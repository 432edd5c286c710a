"""How ``store.tgz`` was made: a data dir written by hippograph 0.1 at commit 2cfbba0, whose graph
engine was kuzu 0.11.3 (run from a checkout of that commit: ``python make_store.py OUT_DIR``, then
``tar czf store.tgz -C PARENT store``); ``export.jsonl`` is what that version's ``export``
returned on it. tests/test_engine_upgrade.py opens it with today's engine and exports it again.
"""

import shutil
import sys
from pathlib import Path

from hippograph.config import Settings
from hippograph.service.memory import Memory

out = Path(sys.argv[1])
shutil.rmtree(out, ignore_errors=True)
m = Memory.open(Settings(data_dir=out))
m.call("remember", {"content": "Priya Raman leads the Atlas migration at Northwind.", "tags": ["work"]})
m.call(
    "remember", {"content": "Priya prefers short written status updates over meetings.", "kind": "preference"}
)
m.call(
    "remember", {"content": "The team deploys Atlas with Terraform from the ops repo.", "kind": "procedure"}
)
m.call(
    "remember",
    {"content": "We chose PostgreSQL over MySQL for Atlas because of pgvector.", "kind": "decision"},
)
go_live = m.call(
    "remember",
    {
        "content": "Atlas go-live is on 14 March.",
        "subject": "Atlas",
        "predicate": "go_live",
        "object": "14 March",
    },
)
m.call("correct", {"fact_id": go_live.id, "content": "Atlas go-live moved to 2 April."})
m.call(
    "remember",
    {"content": "Lena: I booked the venue in Porto for the offsite.", "session_id": "s1", "kind": "episode"},
)
m.call(
    "remember",
    {"content": "Priya: great, I will send the agenda on Friday.", "session_id": "s1", "kind": "episode"},
)
m.call("remember", {"content": "Sam works on the billing service in Go.", "scope": "project:billing"})
old = m.call("remember", {"content": "Temporary note about the old wiki."})
m.call("forget", {"fact_id": old.id, "reason": "outdated"})
m.close()
