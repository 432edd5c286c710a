"""The shipped NER model: hash-checked before it loads; without it, names are still found by rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hippograph.domain.errors import ModelUnavailable
from hippograph.store.ner import NameFinder, checked, model_dir, shared_recogniser


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
