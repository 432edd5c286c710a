"""gitleaks' rule set as hippograph loads and applies it: the pinned file, the RE2-to-Python
translation, keyword gating, entropy floors and allowlists, and vendor secrets told in prose.

Every secret here is FAKE: drawn at random in the test, in the vendor's format.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
import tomllib
from pathlib import Path

import pytest

from hippograph.text import secret_rules
from hippograph.text.secret_rules import (
    RULES,
    RULES_SHA256,
    go_to_python,
    rule_findings,
    vendor_prose_findings,
)

BASE62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _draw(alphabet: str, length: int, seed: int | str) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=length))


def _found(text: str) -> list[tuple[str, str]]:
    """(rule id, secret) of every finding of `rule_findings`."""
    return [(rule.id, text[start:end]) for start, end, rule in rule_findings(text)]


def _prose(text: str) -> list[tuple[int, int, str]]:
    return [(start, end, rule.id) for start, end, rule in vendor_prose_findings(text)]


def _rule(rule_id: str) -> secret_rules.Rule:
    return next(rule for rule in RULES if rule.id == rule_id)


# --- loading -------------------------------------------------------------------------------------


def test_rules_load_one_per_rule_with_a_regex_in_the_shipped_file() -> None:
    config = tomllib.loads(secret_rules.RULES_FILE.read_text(encoding="utf-8"))
    with_regex = [entry["id"] for entry in config["rules"] if "regex" in entry]
    assert 210 <= len(RULES) <= 230
    assert [rule.id for rule in RULES] == with_regex
    assert len({rule.id for rule in RULES}) == len(RULES)


def test_every_rule_pattern_and_allowlist_is_compiled() -> None:
    for rule in RULES:
        assert isinstance(rule.pattern, re.Pattern), rule.id
        assert rule.kind == rule.id.replace("-", " ")
        assert rule.keywords and all(k == k.lower() for k in rule.keywords), rule.id
        assert (rule.vendor is None) == (rule.shape is None), rule.id
        for allowlist in rule.allowlists:
            assert all(isinstance(r, re.Pattern) for r in allowlist.regexes), rule.id


def test_about_half_the_rules_are_semi_generic_and_the_catch_all_is_not() -> None:
    semi = [rule.id for rule in RULES if rule.vendor is not None]
    assert 80 <= len(semi) <= 110
    assert "adobe-client-id" in semi and "algolia-api-key" in semi
    assert not any(rule_id.startswith("generic") for rule_id in semi)


def test_shipped_rules_file_has_the_pinned_sha256() -> None:
    assert hashlib.sha256(secret_rules.RULES_FILE.read_bytes()).hexdigest() == RULES_SHA256


def test_an_unchanged_copy_of_the_rules_file_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "gitleaks.toml"
    copy.write_bytes(secret_rules.RULES_FILE.read_bytes())
    monkeypatch.setattr(secret_rules, "RULES_FILE", copy)
    rules, _ = secret_rules._load()
    assert [rule.id for rule in rules] == [rule.id for rule in RULES]


def test_a_rules_file_with_one_byte_changed_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = bytearray(secret_rules.RULES_FILE.read_bytes())
    at = raw.index(b"ghp_")  # inside github-pat's regex: still valid TOML, a different rule
    raw[at] = ord("x")
    changed = tmp_path / "gitleaks.toml"
    changed.write_bytes(bytes(raw))
    monkeypatch.setattr(secret_rules, "RULES_FILE", changed)
    with pytest.raises(RuntimeError, match=re.escape(str(changed))) as refused:
        secret_rules._load()
    assert hashlib.sha256(bytes(raw)).hexdigest() in str(refused.value)
    assert RULES_SHA256 in str(refused.value)


# --- Go (RE2) syntax in Python -------------------------------------------------------------------

P8E = r"\b(p8e-(?i)[a-z0-9]{32})(?:x)"


def test_a_mid_pattern_flag_in_python_re_is_an_error_before_translation() -> None:
    with pytest.raises(re.error):
        re.compile(P8E)


def test_go_to_python_scopes_a_mid_pattern_flag_to_the_end_of_its_group() -> None:
    assert go_to_python(P8E) == r"\b(p8e-(?i:[a-z0-9]{32}))(?:x)"


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("p8e-" + _draw(string.ascii_uppercase + string.digits, 32, 1) + "x", True),
        ("p8e-" + _draw(string.ascii_lowercase + string.digits, 32, 2) + "x", True),
        ("P8E-" + _draw(string.ascii_uppercase + string.digits, 32, 3) + "x", False),  # before the flag
        ("p8e-" + _draw(string.ascii_uppercase + string.digits, 32, 4) + "X", False),  # after its group
    ],
    ids=["uppercase-body", "lowercase-body", "uppercase-prefix", "uppercase-after-group"],
)
def test_a_scoped_flag_applies_inside_its_group_only(text: str, matches: bool) -> None:
    assert (re.fullmatch(go_to_python(P8E), text) is not None) is matches


@pytest.mark.parametrize(
    ("text", "matches"), [("xb", True), ("xB", True), ("C", True), ("c", True), ("xc", False)]
)
def test_a_mid_pattern_flag_keeps_the_alternatives_after_it_apart(text: str, matches: bool) -> None:
    # RE2 reads `x(?i)b|c` as `xb` or `c`, the flag holding in both alternatives.
    assert go_to_python(r"x(?i)b|c") == r"x(?i:b)|(?i:c)"
    assert (re.fullmatch(go_to_python(r"x(?i)b|c"), text) is not None) is matches


def test_curls_authorization_header_is_found_in_single_and_double_quotes() -> None:
    token = "".join(random.Random(3).choices(string.ascii_letters + string.digits, k=32))
    for quote in "'\"":
        text = f"curl -H {quote}Authorization: Bearer {token}{quote} https://api.example.com/v1/"
        assert [(rule.id, text[start:end]) for start, end, rule in rule_findings(text)] == [
            ("curl-auth-header", token)
        ]


def test_a_flag_at_the_very_start_stays_global() -> None:
    assert go_to_python(r"(?i)abc") == r"(?i)abc"


def test_a_closing_paren_in_a_class_or_escaped_does_not_end_the_flag_scope() -> None:
    assert go_to_python(r"(a(?i)[)]b)c") == r"(a(?i:[)]b))c"
    assert go_to_python(r"(a(?i)\)b)c") == r"(a(?i:\)b))c"


def test_go_to_python_spells_out_posix_classes() -> None:
    pattern = go_to_python(r"\b(pat[[:alnum:]]{14}\.[a-f0-9]{64})\b")
    assert pattern == r"\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b"
    token = "pat" + _draw(BASE62, 14, 5) + "." + _draw(HEX, 64, 6)
    assert re.fullmatch(pattern, token)
    assert not re.fullmatch(pattern, "pat" + _draw(BASE62, 13, 5) + "_." + _draw(HEX, 64, 6))


def test_go_to_python_turns_end_of_text_into_pythons() -> None:
    pattern = go_to_python(r"abc\z")
    assert pattern == r"abc\Z"
    assert re.search(pattern, "xabc")
    assert re.search(pattern, "abc\n") is None  # \z is the very end, not before a final newline


# --- rule_findings -------------------------------------------------------------------------------

GITHUB_PAT = "ghp_" + _draw(BASE62, 36, "github-pat")


def test_a_github_pat_is_found_as_github_pat_with_its_span() -> None:
    text = f"the CI bot pushes with {GITHUB_PAT} every night"
    assert [(s, e, r.id) for s, e, r in rule_findings(text)] == [(23, 63, "github-pat")]
    assert text[23:63] == GITHUB_PAT


def test_a_rule_runs_only_when_its_keyword_is_present() -> None:
    text = f"the CI bot pushes with {GITHUB_PAT}"
    assert _found(text) == [("github-pat", GITHUB_PAT)]
    assert list(rule_findings(text, present=set())) == []
    assert list(rule_findings(text, present={"ghp_"})) == list(rule_findings(text))


def test_a_secret_at_or_under_the_rules_entropy_is_dropped() -> None:
    low = "ghp_" + "a1" * 18  # matches the format; about 1.6 bits per character
    assert secret_rules.entropy(low) <= _rule("github-pat").entropy
    assert _found(f"the CI bot pushes with {low}") == []


def test_entropy_is_shannons_in_bits_per_character() -> None:
    assert secret_rules.entropy("") == 0.0
    assert secret_rules.entropy("aaaa") == 0.0
    assert secret_rules.entropy("ab" * 8) == 1.0
    assert secret_rules.entropy("a1b2" * 8) == 2.0


GENERIC_VALUE = _draw(BASE62, 16, "generic")


def test_a_generic_api_key_assignment_is_found_as_its_value() -> None:
    text = f'api_key = "{GENERIC_VALUE}"'
    assert [(s, e, r.id) for s, e, r in rule_findings(text)] == [(11, 27, "generic-api-key")]


@pytest.mark.parametrize("word", ["changeme", "example", "sample"])
def test_a_generic_value_holding_a_stopword_is_allowed(word: str) -> None:
    tail = "7" + GENERIC_VALUE[:8]
    value, control = word + tail, "qzvjxwkk"[: len(word)] + tail
    # Random enough and with a digit: only the rule's stopwords can drop it, and do.
    assert secret_rules.entropy(value) > _rule("generic-api-key").entropy
    assert _found(f'api_key = "{control}"') == [("generic-api-key", control)]
    assert _found(f'api_key = "{value}"') == []


@pytest.mark.parametrize(
    "value",
    ["{{ api_key_2 }}", "a1b2a1b2a1b2a1b2", "Zq81Lm4KpZq81Lm4Kp", "abcdefghijklmnop"],
    ids=["template", "low-entropy", "repeated-half", "word-without-digit"],
)
def test_a_generic_value_that_is_a_placeholder_or_not_random_is_not_found(value: str) -> None:
    assert _found(f'api_key = "{value}"') == []


PULUMI = "pul-" + _draw(HEX, 40, "pulumi")
ADOBE_SECRET = "p8e-" + _draw(BASE62, 31, "adobe") + "X"


@pytest.mark.parametrize(
    ("token", "rule_id"), [(PULUMI, "pulumi-api-token"), (ADOBE_SECRET, "adobe-client-secret")]
)
@pytest.mark.parametrize(
    "template",
    ["my token is {}, use it", "my token is {}.", "my token is {}!", "(see {})", "my token is {}"],
    ids=["comma", "full-stop", "exclamation", "parenthesis", "end-of-text"],
)
def test_a_token_before_sentence_punctuation_is_still_found(token: str, rule_id: str, template: str) -> None:
    text = template.format(token)
    assert _found(text) == [(rule_id, token)]


def test_the_rule_itself_stops_at_sentence_punctuation_without_the_prose_reading() -> None:
    # What the punctuation handling is for: gitleaks' rule wants a space, quote or end after it.
    assert _rule("pulumi-api-token").pattern.search(f"my token is {PULUMI}, use it") is None


# --- vendor_prose_findings -----------------------------------------------------------------------

ADOBE_ID = _draw(HEX, 32, "adobe-id")


def test_a_semi_generic_secret_after_the_vendor_and_a_credential_word_is_found() -> None:
    text = f"we rotated the Adobe key for staging to {ADOBE_ID}"
    assert _prose(text) == [(40, 72, "adobe-client-id")]
    assert text[40:72] == ADOBE_ID
    assert _found(text) == []  # no assignment: gitleaks' own rule misses it


@pytest.mark.parametrize(
    "text",
    [
        f"we rotated the Adobe key for staging to {ADOBE_ID}.",
        f"Adobe: the new token is {ADOBE_ID}, use it for staging",
        f"for Adobe the secret {ADOBE_ID.upper()} goes in the vault",
    ],
    ids=["full-stop", "colon-and-comma", "uppercase"],
)
def test_a_semi_generic_secret_in_prose_is_found_around_punctuation(text: str) -> None:
    [(start, end, rule_id)] = _prose(text)
    assert rule_id == "adobe-client-id"
    assert text[start:end].lower() == ADOBE_ID


@pytest.mark.parametrize(
    "text",
    [
        f"we moved the Adobe integration for staging to {ADOBE_ID}",
        f"we rotated the Adobe key. Staging now runs {ADOBE_ID}",
        f"the key is {ADOBE_ID}, for the Adobe team",
    ],
    ids=["no-credential-word", "credential-word-in-another-sentence", "value-before-the-vendor"],
)
def test_a_semi_generic_secret_needs_the_vendor_before_it_and_a_credential_word_beside_it(text: str) -> None:
    assert _prose(text) == []


@pytest.mark.parametrize(
    "value",
    [
        ADOBE_ID[:30],
        ADOBE_ID + "ab",
        "g" + ADOBE_ID[1:],
        "abcdef" * 5 + "ab",
        "a1b2" * 8,
    ],
    ids=["too-short", "too-long", "not-hex", "no-digit", "at-the-entropy-floor"],
)
def test_a_value_off_the_rules_shape_or_not_random_is_not_found_in_prose(value: str) -> None:
    assert _prose(f"we rotated the Adobe key for staging to {value}") == []


def test_vendor_prose_runs_only_when_a_vendor_keyword_is_present() -> None:
    text = f"we rotated the Adobe key for staging to {ADOBE_ID}"
    assert list(vendor_prose_findings(text, present=set())) == []
    assert [r.id for _, _, r in vendor_prose_findings(text, present={"adobe"})] == ["adobe-client-id"]


def test_findings_yield_the_rules_and_then_the_prose_findings() -> None:
    text = f"we rotated the Adobe key for staging to {ADOBE_ID}; CI uses {GITHUB_PAT}"
    found = [(text[s:e], r.id) for s, e, r in secret_rules.findings(text)]
    assert found == [(GITHUB_PAT, "github-pat"), (ADOBE_ID, "adobe-client-id")]
