"""The shipped NER model: hash-checked before it loads; without it, names are still found by rule."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hippograph.domain.errors import ModelUnavailable
from hippograph.store.ner import NameFinder, checked, model_dir, names_from_spans, shared_recogniser


def test_the_shipped_model_matches_its_pinned_hashes() -> None:
    assert (model_dir() / "ner" / "model").is_file()


def test_an_altered_model_file_is_refused(tmp_path: Path) -> None:
    copy = shutil.copytree(model_dir(), tmp_path / "model")
    with (copy / "ner" / "model").open("r+b") as fh:
        first = fh.read(1)
        fh.seek(0)
        fh.write(bytes([first[0] ^ 1]))
    with pytest.raises(ModelUnavailable, match="pinned sha256"):
        checked(copy)


def test_the_recogniser_types_people_places_and_organisations() -> None:
    found = NameFinder(shared_recogniser()).find("Priya Raman leads the platform team at Google in Berlin.")
    assert [(n.text, n.type) for n in found] == [
        ("Priya Raman", "person"),
        ("Google", "organization"),
        ("Berlin", "place"),
    ]


def test_without_the_model_the_rules_still_find_speakers_code_and_capitalised_names() -> None:
    # "Henry" opens the turn's sentence: only a candidate, which the name typer keeps or drops.
    found = NameFinder(None).find("Caroline: Henry fixed write_lock in Lisbon.")
    assert [(n.text, n.type, n.how) for n in found] == [
        ("Caroline", "person", "speaker"),
        ("write_lock", "code", "code"),
        ("Lisbon", "concept", "capitalised"),
        ("Henry", "concept", "opening"),
    ]


def test_a_server_loads_the_model_after_its_first_call_and_a_command_never_for_a_read(
    tmp_path: Path, models_dir: Path
) -> None:
    # In a fresh interpreter: nothing else has loaded spaCy there.
    probe = f"""
import sys, time
from pathlib import Path
from hippograph.config import Settings
from hippograph.service.memory import Memory
settings = Settings(data_dir=Path({str(tmp_path / "data")!r}), models_dir=Path({str(models_dir)!r}))
memory = Memory.open(settings)
memory.call("search", {{"query": "who reviewed the release?"}})
time.sleep(0.5)
read_only = "spacy" in sys.modules
memory.start_background()
memory.call("search", {{"query": "who reviewed the release?"}})
deadline = time.monotonic() + 60
while "spacy" not in sys.modules and time.monotonic() < deadline:  # loading, with no write asking
    time.sleep(0.2)
print(read_only, "spacy" in sys.modules)
memory.close()
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=180)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_the_recogniser_loads_without_spacys_command_line() -> None:
    # In a fresh interpreter: spaCy's package imports its CLI (typer, weasel, requests) for
    # spacy.info alone (~18 MB); the recogniser does without it.
    probe = """
import sys
from hippograph.store.ner import NameFinder, shared_recogniser
found = NameFinder(shared_recogniser()).find("Priya Raman moved to Berlin.")
print([n.text for n in found], [m for m in ("weasel", "typer", "requests") if m in sys.modules])
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=180)
    assert done.stdout.strip() == "['Priya Raman', 'Berlin'] []", done.stderr


def _spans(text: str, *found: tuple[str, str]) -> list[tuple[str, str, int, int]]:
    """The recogniser's spans, as it might find them: (span, label) at the span's place."""
    return [(span, label, text.index(span), text.index(span) + len(span)) for span, label in found]


@pytest.mark.parametrize(
    ("text", "found", "names"),
    [
        # An article or a title is no part of a name.
        ("It runs on a Raspberry Pi.", [("a Raspberry Pi", "PRODUCT")], ["Raspberry Pi"]),
        ("We should ask Uncle Rafi first.", [("Uncle Rafi", "PERSON")], ["Rafi"]),
        # A lowercase word inside a span that no name holds: two names, found by rule.
        ("Our chat moved from Slack to Zulip.", [("Slack to Zulip", "ORG")], ["Slack", "Zulip"]),
        ("I volunteer at the Bank of Ireland.", [("the Bank of Ireland", "ORG")], ["Bank of Ireland"]),
        # A span inside a run of capitalised words is the whole run, unless a date cuts it.
        ("Our club, Otter Lane Dolphins, trains.", [("Lane Dolphins", "PERSON")], ["Otter Lane Dolphins"]),
        ("On Tuesday Priya Raman left.", [("Tuesday", "DATE"), ("Priya Raman", "PERSON")], ["Priya Raman"]),
    ],
)
def test_a_recognised_span_is_trimmed_to_the_name_it_holds(
    text: str, found: list[tuple[str, str]], names: list[str]
) -> None:
    assert [n.text for n in names_from_spans(text, _spans(text, *found))] == names
