"""Full text on PostgreSQL, ranked as the embedded index ranks it: BM25 over the same terms.

The embedded LanceDB index analyses text with its default full-text settings (split on every
character that is not a letter or digit, lower case, tokens of 40 bytes or more dropped, Snowball
English stems, accents folded after stemming, stems that are English stop words dropped) and ranks with BM25
(k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)), a document's length in kept terms).
Here the same analysis runs in Python (``terms``), each row keeps its terms as a ``text[]``
(GIN-indexed: the candidates hold any of the query's terms), and ``hg_vec_terms`` keeps, per
table, each term's document count and the totals (the ``''`` term: documents, and terms in all),
changed in the transaction that changes the rows. So a memory moved between the backends ranks
its text alike (``tests/test_backend_move.py``), which ``ts_rank_cd`` did not. ``ranked`` finds
the best rows without scoring every row of a common term (``tests/test_pg_text.py``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import combinations
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

# ``most``: the most times one row has held the term (never lowered when rows go: a bound, for
# ``ranked``); NULL where not known (counts made before it was kept: ``MOST_FILLED`` fills them).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hg_vec_terms (tbl TEXT NOT NULL, term TEXT NOT NULL, "
    "docs BIGINT NOT NULL, terms BIGINT NOT NULL DEFAULT 0, most INTEGER, PRIMARY KEY (tbl, term))"
)
# A database whose counts were made before ``most`` was kept: the column, and each term's most
# counted from the rows (once; a term with no row left stays unknown).
MOST_FILLED = """
DO $$ DECLARE t text; BEGIN
IF to_regclass('hg_vec_terms') IS NOT NULL THEN
    ALTER TABLE hg_vec_terms ADD COLUMN IF NOT EXISTS most INTEGER;
    FOREACH t IN ARRAY ARRAY['hg_vec_facts', 'hg_vec_entities'] LOOP
        IF to_regclass(t) IS NOT NULL THEN
            EXECUTE format('UPDATE hg_vec_terms v SET most = m.most FROM (SELECT term, max(n) AS most '
                'FROM (SELECT r.id, u.term, count(*) AS n FROM %I r CROSS JOIN LATERAL unnest(r.terms) '
                'AS u(term) GROUP BY r.id, u.term) c GROUP BY term) m WHERE v.tbl = %L AND v.term = m.term',
                t, t);
        END IF;
    END LOOP;
END IF; END $$;
"""


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
    most: Counter[str] = Counter()
    for row in rows:
        for term, n in Counter(row).items():
            most[term] = max(most[term], n)
    # A removal leaves ``most`` as it was; an addition raises it, unless it is not known.
    conn.cursor().executemany(
        "INSERT INTO hg_vec_terms (tbl, term, docs, terms, most) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (tbl, term) DO UPDATE SET docs = hg_vec_terms.docs + excluded.docs, "
        "terms = hg_vec_terms.terms + excluded.terms, most = CASE WHEN excluded.most IS NULL "
        "OR hg_vec_terms.most IS NULL THEN hg_vec_terms.most "
        "ELSE greatest(hg_vec_terms.most, excluded.most) END",
        [
            (
                table,
                term,
                sign * n,
                sign * (total_terms if term == _TOTALS else 0),
                most.get(term) if sign > 0 else None,
            )
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


CANDIDATES = "{candidates}"  # where ``ranked`` puts its condition on the rows' terms (GIN)

# Rows the first pass of ``ranked`` scores: the rarest terms' rows, up to about this many a result.
_FIRST_PASS_ROWS = 8
# The most term sets a row may be asked to hold all of one of (``sufficient``), and the most
# terms they are sought among; past either, the second pass reads every row holding one of the
# essential terms.
_MOST_SETS, _MOST_TERMS = 32, 12


def ranked(
    conn: Any, table: str, clause: str, params: Sequence[Any], query: Sequence[str], k: int
) -> list[Any]:
    """(id, score) of the ``k`` best rows of ``table`` by BM25 over ``query``'s terms, exactly as
    scoring every row that holds one of them would rank them, without scoring most rows of common
    terms. ``clause`` starts with ``CANDIDATES``; ``params`` are the rest of its parameters.

    MaxScore (Turtle and Flood, 1995): a term adds at most ``_bound`` to a row's score. A first
    pass scores the rows that hold the rarest terms; its ``k``-th score is one that ``k`` rows
    reach. A row whose terms' bounds sum to less cannot be among the best, so the second pass
    scores only the rows that hold all the terms of one of the ``sufficient`` sets (two common
    names together, where each alone cannot reach it). The common terms' rows (a hub's name is in
    a tenth of the facts) are read only when they can still change the answer.
    """
    terms = sorted(set(query))
    if k <= 0:
        return []
    counted = conn.execute(
        "SELECT term, docs, terms, most FROM hg_vec_terms WHERE tbl = %s AND term = ANY(%s)",
        (table, [*terms, _TOTALS]),
    ).fetchall()
    docs = {str(term): int(n) for term, n, _, _ in counted if term != _TOTALS}
    most = {str(term): m for term, _, _, m in counted}
    total, words = next(((int(n), int(w)) for term, n, w, _ in counted if term == _TOTALS), (0, 0))
    held = sorted((t for t in terms if docs.get(t, 0) > 0), key=lambda t: (docs[t], t))
    if not held or total <= 0:
        return []
    weight = {term: _idf(total, docs[term]) * (_K1 + 1) for term in held}
    bound = {term: weight[term] * _most_share(most[term], words / total) for term in held}
    weighted = [value for term in held for value in (weight[term], term)]

    def best(sets: Sequence[Sequence[str]]) -> list[Any]:
        condition, held_params = _holding(sets)
        sql = _scored_sql(table, clause.replace(CANDIDATES, condition, 1), len(held))
        return list(conn.execute(sql, (*weighted, words / total, *held_params, *params, k)).fetchall())

    first: list[str] = []
    for term in held:
        if sum(docs[t] for t in first) >= _FIRST_PASS_ROWS * k:
            break
        first.append(term)
    rows = best([[term] for term in first])
    if len(first) == len(held):
        return rows  # the first pass read every term's rows
    if len(rows) < k:
        return best([[term] for term in held])  # no k-th score to prune by
    needed = sufficient(bound, float(rows[-1][1]))
    # A row that can reach the k-th score and holds one of the first terms was scored already.
    return rows if all(set(chosen) & set(first) for chosen in needed) else best(needed)


def sufficient(bound: Mapping[str, float], reached: float) -> list[tuple[str, ...]]:
    """Sets of terms a row must hold all of one of to score ``reached`` or more, given each term's
    bound: the smallest sets whose bounds sum to it (``_least``). More than ``_MOST_SETS`` of them,
    or ``_MOST_TERMS`` terms: each essential term alone (a looser condition)."""
    least = _least(reached)
    if len(bound) > _MOST_TERMS:
        return [(term,) for term in essential(bound, reached)]
    terms = sorted(bound, key=lambda t: (-bound[t], t))
    found: list[tuple[str, ...]] = [(term,) for term in terms if bound[term] >= least]
    rest = [term for term in terms if bound[term] < least]  # a set holding one of those is not smallest
    larger: list[frozenset[str]] = []
    for size in range(2, len(rest) + 1):
        for chosen in combinations(rest, size):
            if sum(bound[t] for t in chosen) >= least and not any(s <= set(chosen) for s in larger):
                larger.append(frozenset(chosen))
                found.append(chosen)
                if len(found) > _MOST_SETS:
                    return [(term,) for term in essential(bound, reached)]
    return found


def essential(bound: Mapping[str, float], reached: float) -> list[str]:
    """The terms a row must hold one of to score ``reached`` or more, given each term's bound:
    the others, taken from the lowest bound up, bound less than ``reached`` together (``_least``)."""
    spare, least = 0.0, _least(reached)
    left = sorted(bound, key=lambda t: (bound[t], t))
    while left and spare + bound[left[0]] < least:
        spare += bound[left.pop(0)]
    return left


def _least(reached: float) -> float:
    """The least bound that may still reach ``reached``: a slack of 10^-9 of it for rounding, and
    10^-9 more, as rows whose scores agree to 12 decimals tie (``_scored_sql``) however small."""
    return reached * (1 - 1e-9) - 1e-9


def _holding(sets: Sequence[Sequence[str]]) -> tuple[str, list[list[str]]]:
    """The condition that a row (``t``) holds every term of one of ``sets``, and its parameters:
    one GIN overlap for the single terms, one containment for each larger set."""
    single = sorted(terms[0] for terms in sets if len(terms) == 1)
    larger = [sorted(terms) for terms in sets if len(terms) > 1]
    parts = (["t.terms && %s::text[]"] if single else []) + ["t.terms @> %s::text[]"] * len(larger)
    return "(" + " OR ".join(parts) + ")", ([single] if single else []) + larger


def _scored_sql(table: str, clause: str, terms: int) -> str:
    """The query of the best rows of ``table`` (as ``t``) that ``clause`` admits by BM25 over
    ``terms`` terms; parameters: each term's ``idf * (k1 + 1)`` and the term, the table's mean
    length in terms, the term arrays of the condition ``clause`` holds (``_holding``) and the rest
    of the clause's, k. Each row is read once and its score is one expression: a term's share
    ``idf (k1 + 1) tf / (tf + L)`` is written ``idf (k1 + 1) (1 - L / (tf + L))``, which reads
    ``tf`` once. Every candidate holds a term,
    so every score is above 0. The arithmetic is in float8 throughout (a bare constant would be
    numeric, and the numbers of every row twice as slow to score)."""
    share = "%s::float8 * (1 - n.l / (cardinality(array_positions(t.terms, %s::text)) + n.l))"
    length = f"{_K1}::float8 * ({1 - _B}::float8 + {_B}::float8 * cardinality(t.terms) / %s::float8)"
    return (
        f"SELECT id, score FROM (SELECT t.id, {' + '.join([share] * terms)} AS score FROM {table} t "
        f"CROSS JOIN LATERAL (SELECT {length} AS l) n {clause}) s "
        # Sums of the same terms may differ in the last bit with the plan's order: rows that score
        # alike to 12 decimals are a tie, broken by id, whichever rows the plan read.
        "ORDER BY round(score * 1e12::float8) DESC, id LIMIT %s"
    )


def _idf(total: int, docs: int) -> float:
    return math.log(1 + (total - docs + 0.5) / (docs + 0.5))


def _most_share(most: int | None, mean_length: float) -> float:
    """The most of its ``idf (k1 + 1)`` a term adds to a row: ``tf / (tf + k1 (1 - b + b dl /
    avgdl))`` grows with ``tf`` (at most ``most``) and shrinks with ``dl`` (at least 1), so it
    is below its value at those two; with ``most`` unknown, below 1."""
    if not most:
        return 1.0
    return most / (most + _K1 * (1 - _B + _B / mean_length))
