"""Performance at scale: hippograph from 1k to 100k facts, beside the floor and beside peers.

One command, from the repository root (the venv has hippograph installed, plus the ``bench``
extras ``matplotlib``, ``psutil`` and ``pyinstrument``; Node.js/npx for one peer)::

    python -m bench.perf                                  # 1k, 10k, 100k facts, peers on
    python -m bench.perf --sizes 1000,10000 --no-peers    # quick look

It prints one markdown table (ours, floor, ratio to the floor, growth between sizes,
targets, peers) and writes ``bench/results/perf.md``, ``perf.json``, ``perf.png`` (p50 and
p95 latency vs store size, log-log) and ``perf_profile.txt`` (where the time of search,
recall, remember and opening the store goes at the largest size).

What one run does, per store size N (each size in its own worker process, so the peak RSS
of one size does not leak into the next):

1. **Corpus.** A deterministic generated memory (``random.Random(seed)``): 400 people, 80
   projects, 40 places, 70 tools, 60 topics, picked with Zipf weights so a few entities are
   hubs (the busiest person and project are each in ~12% of facts); preferences,
   decisions, procedures, episodes and plain facts from varied templates (~94% distinct
   texts); 1-3 tags; sessions of 4-20 facts (NEXT edges); event times spread evenly over
   three years; ~4% of facts get a CAUSES link from an earlier fact of their session; ~1/3
   carry subject/predicate/object, mostly as ``user_edit``, so later values supersede
   earlier ones (the rest contradict). The store of size N holds the first N facts of one
   stream. Queries are distinct paraphrase-like questions over the same vocabulary (people,
   projects, tools, topics; some with a time phrase such as "in May 2023").
2. **Build**, by the product path: ``Memory.remember_many`` over the corpus in calls of
   2,000 facts (each call validates, embeds and writes its facts in batches), then
   ``Memory.link`` for each CAUSES edge of the call. Its facts/s (time in ``remember_many``
   only) is the "bulk import" figure, set against the embedding model's own batch throughput
   measured in the same worker (1,024 corpus texts in calls of 64, before and after the
   build; the mean). Stores above 10k facts are built by import instead (``bulk``: the
   corpus restored through ``transfer.restore``, as ``hippograph import`` does; remember_many
   built ~18 facts/s at 100k), with the vectors the same model computed for the same texts
   in earlier runs (``--vector-cache``, default ``~/.cache/hippograph/bench-vectors``, in
   shards; the first run fills it, or ``python -m bench.perf.vector_cache --facts N`` ahead
   of it: the model embeds ~165 texts/s here). Such a size reports no bulk-import figure. The store is
   then closed and reopened; every latency figure goes through ``Memory.remember`` /
   ``search`` / ``recall`` or the MCP tools, with the model itself.
3. **Warm latency** (store reopened, ``Memory.tune_indexes`` run as a server runs it in the
   background, 5 warm-up queries): ``search(q, limit=10)`` and
   ``recall(q, budget_tokens=1000)``, with graph expansion on and off
   (``retriever.with_policy(graph=False)``); then 300 ``remember`` calls with new facts of
   the same stream (the service path). Accesses are recorded as the tools record them and
   applied when the store closes. A phase stops early past ``--phase-seconds`` once it has
   30 samples (the JSON has ``n`` for every figure), so a slow size cannot stall the run.
4. **Floor**, same process, same table, same queries: the model embedding one query; a
   bare LanceDB query on the ``facts`` table (``table.search(vec).limit(10).to_list()``,
   the table opened by ``lancedb.connect`` with LanceDB's default caches, not the store's);
   exact numpy top-k over the same vectors held in RAM; the floor pipeline (embed + bare
   LanceDB) that the ratio rows divide by; and LanceDB as search calls it (k=40, cosine,
   status/scope prefilter), to show what the filter costs.
5. **MCP.** The store is closed and ``python -m hippograph serve`` is started over stdio
   (``HIPPOGRAPH_DATA_DIR``/``HIPPOGRAPH_MODELS_DIR``) three times: cold start is the median
   time from spawn to the first answered ``search`` tool call. The last session also times
   200 ``remember`` and 50 ``search`` tool calls and reads the server's RSS and peak RSS
   (``/proc/PID/status`` VmRSS/VmHWM) after each step.
6. **Disk**: bytes on disk (``du``) of the data dir after close, per fact, split into Kùzu and
   LanceDB; the model lives in a separate models dir and is not counted.

At the largest size the worker also times each stage of search, recall and remember by
wrapping the store methods from the bench (no server code changes), and profiles them and
``Memory.open`` with pyinstrument, into ``perf_profile.txt``.

Peers (``--peers``, default on; ``bench/perf_peers.py``) get the same facts and questions:
the reference MCP memory server (``npx -y @modelcontextprotocol/server-memory`` over stdio)
and ``kuzu-memory`` from PyPI in its own venv (``--peer-venv``, created with pip if
missing). A peer that cannot install or run within its time limit is reported with the
reason, never fatal.

Noise: load average and CPU pressure (PSI) are recorded at the start and end. Other
processes on a 2-core machine inflate every figure (ours, the floor and the peers alike),
which is why ratios to the floor, measured in the same process at the same time, are
reported beside the absolute figures.

The modules, one job each (imports point down this list, never up):

- ``cli``: the command; one worker process per size, then the peers, then the report.
- ``report``: the table, verdicts, ``perf.md``/``perf.json``/``perf.png``; ``notes``: the notes and
  what bounds each missed target; ``figures``: targets, lookups and ratios both read.
- ``peers``: server-memory over MCP and kuzu-memory in its venv (``kuzu_worker``, stdlib only).
- ``worker``: one size in-process; ``servers``: the MCP phase against ``hippograph serve``;
  ``profiling``: stage timers and pyinstrument; ``build``: the store by ``remember_many``;
  ``bulk``: the store by import; ``vector_cache``: the model's vectors kept between runs.
- ``measure``: percentiles, timed loops, disk, RSS, the floor; ``workload``: corpus and questions.

Client plumbing (server env, MCP sessions, tool calls) comes from the repository's ``testkit``.
"""
