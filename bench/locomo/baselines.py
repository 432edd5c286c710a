"""The baselines hippograph is set against: BM25, exact vector search and their RRF, on the same turns."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from bench.locomo.data import Conversation
from bench.locomo.scoring import TOP_K, Answer, count_tokens

RRF_K = 60
# Each list fused by the RRF baseline is cut here, as hippograph's channels are (fanout 4 x limit 10).
# Fusing shorter lists scores higher on this data (see bench/README.md), so the depth is part of the baseline.
RRF_DEPTH = 40

# One list for every method that tokenizes (NLTK's English list).
STOPWORDS = frozenset(
    """a about above after again against ain all am an and any are aren aren't as at be because been before
    being below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don
    don't down during each few for from further had hadn hadn't has hasn hasn't have haven haven't having
    he her here hers herself him himself his how i if in into is isn isn't it it's its itself just ll m ma
    me mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o of off on once only
    or other our ours ourselves out over own re s same shan shan't she she's should should've shouldn
    shouldn't so some such t than that that'll the their theirs them themselves then there these they this
    those through to too under until up ve very was wasn wasn't we were weren weren't what when where which
    while who whom why will with won won't wouldn wouldn't y you you'd you'll you're you've your yours
    yourself yourselves""".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class BM25:
    """Okapi BM25 over a small corpus, as a dense numpy term-weight matrix."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        tokenized = [tokenize(d) for d in docs]
        self.vocab = {w: i for i, w in enumerate(sorted({w for doc in tokenized for w in doc}))}
        tf = np.zeros((len(docs), len(self.vocab)), dtype=np.float32)
        for row, doc in enumerate(tokenized):
            for word, count in Counter(doc).items():
                tf[row, self.vocab[word]] = count
        df = (tf > 0).sum(axis=0)
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        lengths = tf.sum(axis=1, keepdims=True)
        norm = k1 * (1 - b + b * lengths / max(float(lengths.mean()), 1e-9))
        self.weights = idf * tf * (k1 + 1) / (tf + norm)

    def scores(self, query: str) -> np.ndarray:
        columns = [self.vocab[w] for w in tokenize(query) if w in self.vocab]
        return self.weights[:, columns].sum(axis=1) if columns else np.zeros(len(self.weights))

    def rank(self, query: str) -> list[int]:
        """Documents that share a term with the query, best first (ties in corpus order)."""
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]


def vector_rank(turn_vectors: np.ndarray, query_vector: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-(turn_vectors @ query_vector), kind="stable")]


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K, depth: int = RRF_DEPTH) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(ranking[:depth], 1):
            fused[doc] += 1 / (k + rank)
    return sorted(fused, key=lambda doc: (-fused[doc], doc))


def baseline_answers(
    conv: Conversation, turn_vectors: np.ndarray, question_vectors: np.ndarray
) -> dict[str, list[Answer]]:
    bm25 = BM25([t.content for t in conv.turns])

    def answer(ranking: Sequence[int]) -> Answer:
        top = list(ranking[:TOP_K])
        return Answer(
            [conv.turns[i].dia_id for i in top], sum(count_tokens(conv.turns[i].content) for i in top)
        )

    answers: dict[str, list[Answer]] = {"BM25": [], "vector": [], "RRF (BM25+vector)": []}
    for question, vector in zip(conv.questions, question_vectors, strict=True):
        lexical, dense = bm25.rank(question.text), vector_rank(turn_vectors, vector)
        answers["BM25"].append(answer(lexical))
        answers["vector"].append(answer(dense))
        answers["RRF (BM25+vector)"].append(answer(rrf([lexical, dense])))
    return answers
