"""Titus's and Kingfisher's rule sets as hippograph loads and applies them: the pinned files, Rust's
syntax in Python, the strings that gate each rule, the tools' filters, and the screen using them.

Every secret here is FAKE: drawn at random in the test, or a rule's own example.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hippograph.text import secret_rules_yaml, secrets_scan
from hippograph.text.rust_regex import translate
from hippograph.text.secret_rules_yaml import (
    KINGFISHER,
    TITUS,
    RuleSet,
    digest,
    findings,
    load,
    required_strings,
    rules,
)

BASE62 = string.ascii_letters + string.digits


def _draw(alphabet: str, length: int, seed: int | str) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=length))


def _entries(rule_set: RuleSet) -> dict[str, dict]:
    return {
        entry["id"]: entry
        for path in sorted((rule_set.directory / "rules").glob("*.yml"))
        for entry in yaml.safe_load(path.read_text()).get("rules") or ()
    }


@pytest.mark.parametrize("rule_set", [TITUS, KINGFISHER], ids=["titus", "kingfisher"])
def test_the_shipped_files_have_the_pinned_digest_and_their_licence(rule_set: RuleSet) -> None:
    assert digest(rule_set.directory) == rule_set.sha256
    assert (rule_set.directory / "LICENSE").is_file()
    assert len(load(rule_set)) > 400


def test_rules_are_titus_then_kingfishers_that_titus_does_not_carry() -> None:
    titus, kingfisher = load(TITUS), load(KINGFISHER)
    ids = [rule.id for rule in rules()]
    assert ids[: len(titus)] == [rule.id for rule in titus]
    assert len(ids) == len(set(ids))
    carried = {rule.id for rule in titus}
    assert ids[len(titus) :] == [rule.id for rule in kingfisher if rule.id not in carried]
    assert any(rule.id.startswith("kingfisher.") for rule in titus)  # Titus took some in


def test_the_shipped_derived_rules_are_what_the_yaml_gives() -> None:
    """rules/derived.json spares a process the YAML (~0.5 s); it must say what the files say."""
    shipped = json.loads(secret_rules_yaml.DERIVED.read_text(encoding="utf-8"))
    assert shipped == secret_rules_yaml.derive(), (
        "rules/derived.json is stale: run python -c 'from hippograph.text.secret_rules_yaml "
        "import write_derived; write_derived()'"
    )
    assert rules() == secret_rules_yaml.from_yaml()


def test_derived_rules_of_other_files_are_not_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stale = json.loads(secret_rules_yaml.DERIVED.read_text(encoding="utf-8"))
    stale["from"]["titus"] = "0" * 64  # derived from another Titus
    stale["rules"] = stale["rules"][:1]
    moved = tmp_path / "derived.json"
    moved.write_text(json.dumps(stale), encoding="utf-8")
    monkeypatch.setattr(secret_rules_yaml, "DERIVED", moved)
    secret_rules_yaml._read.cache_clear()
    try:
        assert len(secret_rules_yaml._read()) == len(secret_rules_yaml.from_yaml()) > 1
    finally:
        secret_rules_yaml._read.cache_clear()


def test_a_copy_with_one_byte_changed_is_refused_naming_the_directory(tmp_path: Path) -> None:
    copy = dataclasses.replace(TITUS, directory=tmp_path / "titus")
    shutil.copytree(TITUS.directory, copy.directory)
    assert [rule.id for rule in load(copy)] == [rule.id for rule in load(TITUS)]
    path = copy.directory / "rules" / "github.yml"
    path.write_text(path.read_text().replace("ghp_", "ghx_", 1))
    with pytest.raises(RuntimeError, match=re.escape(str(copy.directory))) as refused:
        load(copy)
    assert TITUS.sha256 in str(refused.value)


def test_only_the_default_rulesets_reported_rules_are_loaded_from_titus() -> None:
    entries = _entries(TITUS)
    ruleset = yaml.safe_load((TITUS.directory / "rulesets" / "default.yml").read_text())["rulesets"][0]
    loaded = {rule.id for rule in load(TITUS)}
    assert loaded <= set(ruleset["include_rule_ids"])
    hidden = {i for i in ruleset["include_rule_ids"] if entries[i].get("visible") is False}
    assert hidden and not hidden & loaded  # `visible: false`: an id another rule's check needs
    assert "kingfisher.datadog.1" in hidden


def test_kingfishers_low_confidence_and_password_hash_rules_are_left_out() -> None:
    entries = _entries(KINGFISHER)
    loaded = {rule.id for rule in load(KINGFISHER)}
    low = {i for i, e in entries.items() if e.get("confidence") == "low"}
    hashes = {i for i, e in entries.items() if e["name"].startswith("Password Hash")}
    assert low and hashes and not (low | hashes) & loaded
    bcrypt = "the old hash was $2b$12$" + _draw(BASE62, 53, "bcrypt")
    assert not [rule.id for _, _, rule in findings(bcrypt) if "pwhash" in rule.id]


# --- Rust's syntax --------------------------------------------------------------------------------


def test_translate_keeps_named_groups_and_drops_verbose_whitespace_and_comments() -> None:
    body, flags, groups = translate("(?xi)\n  algolia (?# vendor )\n  (?P<token> [a-z0-9]{32} )\n")
    assert flags == "i"
    assert body == "algolia(?P<token>[a-z0-9]{32})"
    assert groups[0]["text"] == "[a-z0-9]{32}" and groups[0]["comment"] == ""


def test_every_loaded_rule_finds_most_of_its_own_examples() -> None:
    entries, missed, tried = {**_entries(KINGFISHER), **_entries(TITUS)}, [], 0
    for rule in rules():
        for example in entries[rule.id].get("examples") or []:
            tried += 1
            if not rule.pattern.search(example):
                missed.append((rule.id, example))
    assert tried > 500
    assert len(missed) <= tried // 50, missed  # a few upstream examples do not match in Rust either


# --- the strings that gate a rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "needed"),
    [
        (r"\b(?P<token>(?:ghu|ghs)_[a-zA-Z0-9]{36})\b", {"ghu_", "ghs_"}),
        (r"(?i)algolia(?:.|[\n\r]){0,32}?(?P<token>[a-z0-9]{32})", {"algolia"}),
        (r"(?:abcdef)?xyz_[A-Z]{8}", {"xyz_"}),
        (r"(?:sk|rk)_live_[0-9a-z]{24}", {"_live_"}),
        (r"[A-Z]{2}[0-9]{20}", set()),
    ],
)
def test_required_strings_are_what_every_match_holds(pattern: str, needed: set[str]) -> None:
    assert required_strings(pattern) == needed


def test_every_rule_example_it_matches_holds_one_of_its_gate_strings() -> None:
    entries = {**_entries(KINGFISHER), **_entries(TITUS)}
    for rule in rules():
        for example in entries[rule.id].get("examples") or []:
            match = rule.pattern.search(example)
            if match and rule.keywords:
                assert any(k in match.group().lower() for k in rule.keywords), (rule.id, example)


def test_a_rule_runs_only_when_a_gate_string_is_in_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_" + _draw(BASE62, 36, "gate")
    assert [r.id for _, _, r in findings(f"use {token} here")] == ["np.github.1"]
    ran: list[str] = []  # the sources of the patterns a scan ran
    compiled = secret_rules_yaml._compiled
    monkeypatch.setattr(secret_rules_yaml, "_compiled", lambda source: _Spy(compiled(source), source, ran))
    list(findings("the deploy went out at noon"))
    assert ran == [r.source for r in rules() if not r.keywords and r.shortest <= 27]
    ran.clear()
    list(findings(f"use {token} here"))
    github = {r.id: r.source for r in rules() if r.id.startswith("np.github.")}
    assert github["np.github.1"] in ran and github["np.github.2"] not in ran


class _Spy:
    def __init__(self, pattern: re.Pattern[str], source: str, ran: list[str]) -> None:
        self.pattern, self.source, self.ran = pattern, source, ran

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.ran.append(self.source)
        return self.pattern.finditer(text)


# --- Titus's filters ---------------------------------------------------------------------------------


def test_the_secret_is_the_token_group_and_must_pass_the_entropy_floor() -> None:
    real = "the algolia admin key " + _draw("abcdefghijklmnopqrstuvwxyz0123456789", 32, "algolia")
    found = [(real[s:e], r.id) for s, e, r in findings(real)]
    assert (real.split()[-1], "kingfisher.algolia.1") in found
    flat = "the algolia admin key " + "ab12" * 8  # four characters repeated: 2 bits a character
    assert not any(r.id == "kingfisher.algolia.1" for _, _, r in findings(flat))


def test_pattern_requirements_drop_a_secret_short_of_a_character_class() -> None:
    rule = next(r for r in rules() if r.min_digits >= 2)
    assert not rule.keeps("a" * 20 + "1")
    assert rule.keeps(_draw(BASE62, 40, "classes") + "12aZ")


# --- in the screen ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Hugging Face: " + "hf_" + _draw(string.ascii_letters, 34, "hf"),
        "pinged the bot with xoxb-"
        + _draw("0123456789", 11, "s1")
        + "-"
        + _draw("0123456789", 12, "s2")
        + "-"
        + _draw(BASE62, 24, "s3"),
        "the Anthropic one: sk-ant-api03-" + _draw(BASE62 + "_-", 93, "ant") + "AA",
    ],
)
def test_the_screen_finds_a_titus_format(text: str) -> None:
    assert secrets_scan.scan(text)


def test_a_recaptcha_site_key_is_public_and_its_secret_key_is_not() -> None:
    key = "6Lc" + _draw(BASE62 + "_-", 37, "captcha").replace("_", "Q")[:36] + "9"
    key = key[:3] + "A" + key[4:]
    assert not secrets_scan.scan(f"the public reCAPTCHA site key is {key}")
    assert secrets_scan.scan(f"recaptcha_secret = {key}")


def test_rules_are_read_on_first_use_not_at_import() -> None:
    probe = (
        "from hippograph.text import secrets_scan, secret_rules_yaml as t\n"
        "assert t._read.cache_info().currsize == 0\n"
        "secrets_scan.scan('the deploy token moved to vault path kv/ci at 10:42')\n"
        "assert t._read.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_screening_load_reads_the_rules_once() -> None:
    # In a fresh interpreter: two threads loading at once, then one more load, read them once.
    probe = (
        "import threading\n"
        "from hippograph.service import screening\n"
        "from hippograph.text import secret_rules_yaml as t\n"
        "threads = [threading.Thread(target=screening.load) for _ in range(2)]\n"
        "[th.start() for th in threads]; [th.join() for th in threads]\n"
        "screening.load()\n"
        "assert t._read.cache_info().misses == 1, t._read.cache_info()\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)
