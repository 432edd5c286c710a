"""LoCoMo turn-level evidence retrieval: hippograph against BM25, vector and RRF baselines.

Run from the repository root (the data stays in ``shared/bench/``, never in the repo):

    python -m bench.locomo                                   # full dev set, 5 conversations
    python -m bench.locomo --conversations 1 --limit-questions 40   # quick check
    python -m bench.locomo --variant graph=false --variant channel_weights.entity=0   # ablation

Each conversation goes into a fresh hippograph store through ``Memory.remember``, one
dialogue turn at a time, as the MCP tools would write it. Every question of categories
1-4 with usable evidence is then asked with ``Memory.search`` (and ``Memory.recall`` when
the service has it), and the returned facts are scored against the evidence turns:
Recall@5, Recall@10, NDCG@10 and tokens returned. The baselines rank the same turns with
the same embedding model. Results print as markdown and go to ``bench/results/``.

The modules, one job each: ``data`` (the LoCoMo file: conversations, questions, evidence),
``scoring`` (R@k, NDCG, per-method summaries), ``baselines`` (BM25, vector, RRF), ``ours``
(hippograph's answers, policy variants), ``report`` (run metadata, markdown and JSON files),
``cli`` (the command).
"""
