"""A topic's label: the few words that set its facts apart from the other topics of their scope.

Class-based TF-IDF (as BERTopic labels its topics): a word scores by how many of the topic's
facts use it, times how rare it is across all the topics. A label names no one: a word that
every time it occurs is capitalised (a name, a place, a product, a speaker's "Maya:") is never
part of one, nor are function words or the filler of chat ("yeah", "awesome"). A word one fact
uses is no label for many.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from hippograph.text.query_intent import is_stopword

# Most words in a label, and fewest (when the topic has them).
MOST_WORDS = 4
FEWEST_WORDS = 2

_WORD = re.compile(r"[^\W\d_][\w'’-]*[^\W_]")
_FILLER = frozenset(
    """
    yeah yes yep wow oh ok okay hey hi hello thanks thank awesome cool great glad amazing sounds
    sound hear heard super pretty lot lots thing things stuff good nice love loved lovely totally
    definitely absolutely sure hope hoping happy fun wonderful fantastic incredible interesting
    exciting excited day days time times way something anything everything nothing always never
    maybe kind sort bit feel feeling felt think thought going gonna want wanted make made see
    seen say said take took keep kept look looks looking well one ones new lately today since
    week weeks last yesterday tomorrow tonight month months year years recently wanna gotta try
    trying tried need needs means mean found started start use used talk talked chat catch also
    especially
    """.split()
)


def labels(read: Callable[[], Iterable[Sequence[str]]]) -> list[list[str]]:
    """For each topic, its label's words, most distinctive first; ``read()`` yields each topic's
    texts in turn. It is called twice: once to count every word across the topics, once to
    count each topic's words and label it at once, so no topic's counts are kept while the
    others are read (at 100k facts, kept, they pinned ~10 of Python's arenas after a run)."""
    lowercase: Counter[str] = Counter()  # each word's occurrences written lowercase
    spread: Counter[str] = Counter()  # how many facts of all the topics use each word
    topics = 0
    for texts in read():
        spread.update(_used(texts, lowercase))
        topics += 1
    average = sum(spread.values()) / max(topics, 1)
    return [_label(_used(texts), spread, average, lowercase) for texts in read()]


def _used(texts: Sequence[str], lowercase: Counter[str] | None = None) -> Counter[str]:
    """How many of ``texts`` use each word (and, into ``lowercase``, the words written lowercase)."""
    count: Counter[str] = Counter()
    for text in texts:
        words = list(_words(text))
        if lowercase is not None:
            lowercase.update(word for word, lower in words if lower)
        count.update({word for word, _ in words})
    return count


def still_shared(words: Sequence[str], texts: Sequence[str]) -> list[str]:
    """Of a label's ``words``, those two of ``texts`` still use (after some facts left a topic)."""
    used = _used(texts)
    return [word for word in words if used[word] >= 2]


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """Each word of ``text``, lowercased without a possessive 's, and whether it was written lowercase."""
    for match in _WORD.finditer(text):
        word = match.group().replace("’", "'")
        yield word.lower().removesuffix("'s"), word[0].islower()


def _label(count: Counter[str], spread: Counter[str], average: float, lowercase: Counter[str]) -> list[str]:
    scored = [
        (n * math.log(1 + average / spread[word]), word)
        for word, n in count.items()
        if n >= 2 and _may_label(word, lowercase)
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    best = scored[0][0] if scored else 0.0
    return [
        word for i, (score, word) in enumerate(scored[:MOST_WORDS]) if i < FEWEST_WORDS or 2 * score >= best
    ]


def _may_label(word: str, lowercase: Counter[str]) -> bool:
    bare = word.split("'")[0]
    return (
        len(bare) > 2
        and not is_stopword(word)
        and bare not in _FILLER
        and lowercase[word] > 0  # written lowercase somewhere: not a name
    )
