"""Full text on PostgreSQL, ranked as the embedded index ranks it: BM25 over the same terms.

The embedded LanceDB index analyses text with its default full-text settings (split on every
character that is not a letter or digit, lower case, tokens of 40 bytes or more dropped, Snowball
English stems, accents folded after stemming, stems that are English stop words dropped) and ranks with BM25
(k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)), a document's length in kept terms).
Here the same analysis runs in Python (``terms``), each row keeps its terms as a ``text[]``
(GIN-indexed: the candidates hold any of the query's terms), and ``hg_vec_terms`` keeps, per
table, each term's document count and the totals (the ``''`` term: documents, and terms in all),
changed in the transaction that changes the rows. So a memory moved between the backends ranks
its text alike (``tests/test_backend_move.py``), which ``ts_rank_cd`` did not.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import snowballstemmer

_TOKEN = re.compile(r"[^\W_]+")
_MAX_BYTES = 40
_K1, _B = 1.2, 0.75
# The English stop words of the embedded index's analyser (NLTK's list; the ones with an
# apostrophe cannot survive the split and are left out).
_STOP = frozenset(
    """a about above after again against ain all am an and any are aren as at be because been before
    being below between both but by can couldn d did didn do does doesn doing don down during each few
    for from further had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself just ll m ma me mightn more most mustn my myself needn no nor not
    now o of off on once only or other our ours ourselves out over own re s same shan she should
    shouldn so some such t than that the their theirs them themselves then there these they this those
    through to too under until up ve very was wasn we were weren what when where which while who whom
    why will with won wouldn y you your yours yourself yourselves""".split()
)
_STEMMER = snowballstemmer.stemmer("english")
_TOTALS = ""  # the row of hg_vec_terms that holds a table's totals

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hg_vec_terms (tbl TEXT NOT NULL, term TEXT NOT NULL, "
    "docs BIGINT NOT NULL, terms BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (tbl, term))"
)


def terms(text: str) -> list[str]:
    """``text``'s terms, in order, as the embedded index's analyser makes them."""
    stems = [_term(t) for t in _TOKEN.findall(text.lower()) if len(t.encode()) < _MAX_BYTES]
    return [stem for stem in stems if stem not in _STOP]


@lru_cache(maxsize=65_536)
def _term(token: str) -> str:
    stem = _STEMMER.stemWord(token)
    return "".join(c for c in unicodedata.normalize("NFKD", stem) if not unicodedata.combining(c))


def count(conn: Any, table: str, rows: Sequence[Sequence[str]], sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) ``rows``' terms from ``table``'s counts, in the
    caller's transaction. Terms are written in sorted order, so two writers never deadlock."""
    if not rows:
        return
    docs = Counter(term for row in rows for term in set(row))
    docs[_TOTALS] = len(rows)
    total_terms = sum(len(row) for row in rows)
    conn.cursor().executemany(
        "INSERT INTO hg_vec_terms (tbl, term, docs, terms) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (tbl, term) DO UPDATE SET docs = hg_vec_terms.docs + excluded.docs, "
        "terms = hg_vec_terms.terms + excluded.terms",
        [
            (table, term, sign * n, sign * total_terms if term == _TOTALS else 0)
            for term, n in sorted(docs.items())
        ],
    )
    if sign < 0:  # a term no row holds any more is forgotten (a purged word's stem with it)
        conn.execute(
            "DELETE FROM hg_vec_terms WHERE tbl = %s AND term = ANY(%s) AND docs <= 0 AND term <> ''",
            (table, sorted(docs)),
        )


def forget_counts(conn: Any, table: str) -> None:
    """``table`` is made afresh: its counts go with it."""
    conn.execute("DELETE FROM hg_vec_terms WHERE tbl = %s", (table,))


def ranked_sql(table: str, clause: str) -> str:
    """The query of BM25's best rows of ``table`` (as ``t``) that ``clause`` admits, a WHERE that
    starts with ``CANDIDATES``; parameters: the table's name twice, the query's distinct terms
    twice, the rest of the clause's, k."""
    return (
        "WITH tot AS (SELECT docs::float8 AS n, terms::float8 / greatest(docs, 1) AS avgdl "
        "FROM hg_vec_terms WHERE tbl = %s AND term = ''), "
        "w AS (SELECT d.term, ln(1 + (tot.n - d.docs + 0.5) / (d.docs + 0.5)) AS idf "
        "FROM hg_vec_terms d, tot WHERE d.tbl = %s AND d.term = ANY(%s) AND d.docs > 0) "
        f"SELECT t.id, sum(w.idf * c.tf * {_K1 + 1} / (c.tf + {_K1} * "
        f"({1 - _B} + {_B} * cardinality(t.terms) / tot.avgdl))) AS score "
        f"FROM {table} t CROSS JOIN tot CROSS JOIN w, "
        "LATERAL (SELECT cardinality(array_positions(t.terms, w.term)) AS tf) c "
        f"{clause} AND c.tf > 0 GROUP BY t.id ORDER BY score DESC, t.id LIMIT %s"
    )


CANDIDATES = "t.terms && %s::text[]"  # the rows holding any of the query's terms (GIN)
