"""Typing a new name by what the embedding model knows of it: person, place, organisation or tool.

The recogniser (``ner.py``, spaCy's small English model) types a name it has not seen by its
shape and a few words around it, and is wrong about one time in three on ordinary sentences
("Kafka" a person, "Jira" a place, "Tariq" an organisation, a tool never). The embedding model
knows more, two ways:

- the name: the vector of "Redis" lies near those of other software, "Siobhan" near other
  first names (the mean cosine of its five nearest example names of each type);
- the sentence: "The tickets are tracked in Jira" stays closest in meaning when "Jira" is
  replaced by "a software tool" rather than by "a person", "a place" or "an organization"
  (the cosine of each rewritten sentence with the sentence as written).

A type's score is the sum of the two, less that type's mean score over ordinary sentences
(``_TYPE_MEAN``: some rewrites are nearer than others whatever the name, "a place" most). The
recogniser's type stands where it is the best score; where they disagree, the best type wins
only by a clear margin, else the name gets the neutral type (``concept``): a type in a reply is
right or absent. The sentence's topic weighs on the rewrites too: a person in a sentence about
builds can come out a tool ("Magdalena fixed the flaky build"). Measuring each rewrite also
against the sentence with "something" in the name's place cancels that, but cost more right
types than it saved on the typed sentences (bench/entity_types.py, dev: 73 right and 18 wrong
of 120 against 83 and 13).

A capitalised word opening a sentence ("Rosalind maintains the runners", "Pottery was fun") may
be a name or not: it is one only if its vector is nearer the example names of some type than
ordinary words that open sentences (``_OPENING_WORDS``); else it is dropped. In 400 LoCoMo turns
673 first words were asked and 15 kept: 8 names, 7 not ("Nature", "Yoga", "Networking").

The example names are common names of each kind from around the world, written for this module
(none from the bench's typed sentences). Their vectors are made once, on first use.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from hippograph.store.embed import Embedder
from hippograph.text.names import UNKNOWN_TYPE, Name, keep, opening_word, without_opening_word

_EXAMPLES = {
    "person": """James Maria Mohammed Wei Olga Aarav Fatima Carlos Yuki Amara Lukas Sofia Ahmed
        Elena Kwame Priyanka Hiroshi Ingeborg Mateo Zanele Dmitri Aisha Liam Chiara Jamal Noor
        Bogdan Thandiwe Rafael Keiko""",
    "place": """Paris Nairobi Lima Osaka Manchester Bavaria Patagonia Brooklyn Lagos Melbourne
        Quebec Andalusia Hanoi Tasmania Marseille Casablanca Kyoto Iceland Nebraska Jakarta
        Valparaiso Dubrovnik Montana Sardinia Chennai Glasgow Cusco Bordeaux Kerala Yosemite""",
    "organization": """Microsoft Unilever Siemens Oxfam Toyota Barclays Deloitte Nestle UNICEF
        Spotify Accenture Vodafone Pfizer Airbnb Samsung Ikea Reuters Greenpeace Salesforce
        Heineken Lufthansa Infosys Shopify Stripe Netflix Adidas Novartis Ericsson Walmart Zurich""",
    "tool": """Docker Git Excel Photoshop Terraform MySQL Ansible Vim Webpack NumPy Pandas Flutter
        Swift Golang Nginx Tableau Notion Trello Zoom Chrome Linux Ubuntu MongoDB GraphQL
        Prometheus Jupyter VSCode Haskell Svelte Kibana""",
}
# Ordinary words that open sentences (verbs of requests, greetings, time words, common nouns): a
# sentence's capitalised first word is a name only if it is nearer the example names of some type
# than these (``how="opening"``: "Rosalind maintains ..." yes, "Pottery class was fun" no).
_OPENING_WORDS = """Keep Send Ask Remember Please Make Check Call Use Book Buy Let Tell Move Add Fix
    Deploy Update Review Yesterday Today Tomorrow Maybe Also Our Every Most Some Both Thanks Wow
    Hey Sure Great Sounds Good Nice Congrats Definitely Absolutely Awesome Honestly Actually Last
    Next After Before When Since Because Although Meanwhile Anyway Sorry Yes Yeah Nope Cool Well
    Then Just Only Never Always Sometimes Usually Lunch Dinner Breakfast Coffee Meetings Tickets
    Alerts Logs Backups Designs Kids Mum Dad Grandma Upgrade Install Run Write Read Pair Share
    Store Schedule Plan Cancel Pick"""
_SEEN = 2048  # names whose vectors are kept (1.5 KB each)
_NEAREST = 5  # example names a type's similarity is averaged over
# What a name is replaced by in its sentence, for each type: the type's own name.
_REWRITES = {
    "person": "a person",
    "place": "a place",
    "organization": "an organization",
    "tool": "a software tool",
}
# Each type's mean score (name + sentence) over the 120 sentences of
# bench/data/entity_types_dev.jsonl, their labels unused: the prior a score is measured from.
_TYPE_MEAN = {"person": 1.022, "place": 1.069, "organization": 1.000, "tool": 0.923}
# How much higher the best score must be than the next to overrule the recogniser (chosen on
# bench/data/entity_types_dev.jsonl, scored on the held-out set: bench/entity_types.py).
MARGIN = 0.03
# Names this judges: the recogniser's and capitalised runs typed as one of these. A speaker is a
# person; snake_case and file names are code; "Project Apollo" is a project; nationalities,
# events and languages keep the recogniser's type.
_JUDGED_HOW = frozenset({"ner", "capitalised", "opening"})
# A ticket's key alone ("INC-2231", "PAY-1182") names an issue: none of the four types (after a
# brand, the same shape is a model: "Roland TD-17").
_ISSUE_KEY = re.compile(r"[A-Z][A-Z0-9]{1,9}-\d+")
_JUDGED_TYPES = frozenset({"person", "place", "organization", "thing", "work", UNKNOWN_TYPE})


class _Vectors:
    """One model's vectors of the example names and of the names asked last, shared by every
    ``NameTyper`` of the process on that model (a server opens one memory; tests open many)."""

    def __init__(self) -> None:
        self.examples: dict[str, np.ndarray] | None = None
        self.opening_words: np.ndarray | None = None
        self.seen: OrderedDict[str, np.ndarray] = OrderedDict()
        self.lock = threading.Lock()


_BY_MODEL: dict[str, _Vectors] = {}
_BY_MODEL_LOCK = threading.Lock()


class NameTyper:
    """Types names with the embedding model (thread-safe; examples embedded on first use)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        with _BY_MODEL_LOCK:
            self._cache = _BY_MODEL.setdefault(embedder.name, _Vectors())

    def _example_vectors(self) -> dict[str, np.ndarray]:
        cache = self._cache
        with cache.lock:
            if cache.examples is None:
                embed = self._embedder.embed
                cache.examples = {kind: embed(names.split()) for kind, names in _EXAMPLES.items()}
                cache.opening_words = embed(_OPENING_WORDS.split())
            return cache.examples

    def _is_name(self, examples: dict[str, np.ndarray], vector: np.ndarray) -> bool:
        """Whether a sentence's first word is nearer the example names of some type than the
        ordinary words that open sentences."""
        words = self._cache.opening_words
        assert words is not None  # made with the examples
        return max(_near(ex, vector) for ex in examples.values()) > _near(words, vector)

    def retype(
        self,
        texts: Sequence[str],
        texts_names: Sequence[Sequence[Name]],
        known: Callable[[int, Name], bool],
    ) -> list[list[Name]]:
        """Each text's names with each judged name's type as the model and the recogniser agree
        on it, less a sentence's first word that is no name (alone, or opening a recognised name:
        "Tell Marco" is Marco; or a label opening a line as a speaker does: "Correction: ...");
        a name ``known(text index, name)`` (an entity has it already) is left as it is."""
        answers: dict[tuple[int, str], bool] = {}

        def known_once(t: int, name: Name) -> bool:
            key = (t, name.text)
            if key not in answers:
                answers[key] = known(t, name)
            return answers[key]

        texts_names = self._without_opening_words(texts, texts_names, known_once)
        judged = [
            (t, i)
            for t, names in enumerate(texts_names)
            for i, n in enumerate(names)
            if n.how in _JUDGED_HOW
            and n.type in _JUDGED_TYPES
            and not _ISSUE_KEY.fullmatch(n.text)
            and not known_once(t, n)
        ]
        speakers = [
            (t, i)
            for t, names in enumerate(texts_names)
            for i, n in enumerate(names)
            if n.how == "speaker" and " " not in n.text and not known_once(t, n)
        ]
        typed = [list(names) for names in texts_names]
        if not judged and not speakers:
            return typed
        examples = self._example_vectors()
        asked = judged + speakers
        vectors = dict(zip(asked, self._vectors([texts_names[t][i].text for t, i in asked]), strict=True))
        words = {
            (t, i)
            for (t, i), vector in vectors.items()
            if texts_names[t][i].how in ("opening", "speaker") and not self._is_name(examples, vector)
        }
        names = {ti: vector for ti, vector in vectors.items() if ti not in words and ti not in speakers}
        if names:
            self._type(texts, texts_names, typed, names, examples)
        return [[n for i, n in enumerate(found) if (t, i) not in words] for t, found in enumerate(typed)]

    def _without_opening_words(
        self,
        texts: Sequence[str],
        texts_names: Sequence[Sequence[Name]],
        known: Callable[[int, Name], bool],
    ) -> Sequence[Sequence[Name]]:
        """The names, each recognised name or capitalised run that opens its sentence (typed by
        its head word or not: "Ask Lakeview Bank") without its first word where that word is
        nearer the ordinary words that open sentences than any type's names; a name an entity
        has already ("Willem Fischer met ...") is whole."""
        openers = {
            (t, i): word
            for t, names in enumerate(texts_names)
            for i, n in enumerate(names)
            if n.how not in ("speaker", "code")
            and (word := opening_word(texts[t], n)) is not None
            and not known(t, n)
        }
        if not openers:
            return texts_names
        examples = self._example_vectors()
        vectors = zip(openers, self._vectors(list(openers.values())), strict=True)
        words = {ti for ti, vector in vectors if not self._is_name(examples, vector)}
        stripped = [
            [without_opening_word(n) if (t, i) in words else n for i, n in enumerate(names)]
            for t, names in enumerate(texts_names)
        ]
        return [[n for n in names if keep(n.text)] for names in stripped]  # "Chapter 2": no "2"

    def _type(
        self,
        texts: Sequence[str],
        texts_names: Sequence[Sequence[Name]],
        typed: list[list[Name]],
        names: dict[tuple[int, int], np.ndarray],
        examples: dict[str, np.ndarray],
    ) -> None:
        """Give each name of ``typed`` at a key of ``names`` (its vector) its type: one embedding
        call for the sentences and their rewrites."""
        judged = list(names)
        sentences = sorted({t for t, _ in judged})
        rewrites = [
            f"{texts[t][: n.start]}{phrase}{texts[t][n.end :]}"
            for t, i in judged
            for n in [texts_names[t][i]]
            for phrase in _REWRITES.values()
        ]
        vectors = self._embedder.embed([texts[t] for t in sentences] + rewrites)
        as_written = dict(zip(sentences, vectors[: len(sentences)], strict=True))
        rewritten = vectors[len(sentences) :].reshape(len(judged), len(_REWRITES), -1)
        for (t, i), rewrites_of in zip(judged, rewritten, strict=True):
            sentence = dict(zip(_REWRITES, rewrites_of @ as_written[t], strict=True))
            score = {
                kind: _near(ex, names[t, i]) + float(sentence[kind]) - _TYPE_MEAN[kind]
                for kind, ex in examples.items()
            }
            (best, first), (_, second) = sorted(score.items(), key=lambda kv: -kv[1])[:2]
            name = typed[t][i]
            kind = best if name.type == best or first - second >= MARGIN else UNKNOWN_TYPE
            typed[t][i] = dataclasses.replace(name, type=kind)

    def _vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Vectors of ``texts`` (unit length, as the embedder makes them); the ``_SEEN`` names
        asked last are kept (names recur)."""
        cache = self._cache
        with cache.lock:
            known = {t: cache.seen[t] for t in texts if t in cache.seen}
            for text in known:
                cache.seen.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, self._embedder.embed(missing), strict=True))
            with cache.lock:
                cache.seen.update((t, known[t]) for t in missing)
                while len(cache.seen) > _SEEN:
                    cache.seen.popitem(last=False)
        return [known[t] for t in texts]


def _near(examples: np.ndarray, vector: np.ndarray) -> float:
    """The mean cosine of ``vector`` with its ``_NEAREST`` nearest rows of ``examples``."""
    return float(np.sort(examples @ vector)[-_NEAREST:].mean())
