"""Secret scanning: what is caught, what is left alone, how it is masked and described.

The corpus in tests/data/secrets/ holds FAKE credentials in real formats, generated at random:
``secrets.txt`` is ``kind<TAB>sentence`` (a literal ``\\n`` in a sentence is a line break), and
``ordinary.txt`` is one ordinary memory per line, none of which holds a secret.
"""

from __future__ import annotations

import itertools
import random
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippograph.config import Settings
from hippograph.domain.errors import SecretDetected
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.text import secrets_scan
from hippograph.text.secrets_scan import SecretFinding, _raw_findings, describe, redact, scan

DATA = Path(__file__).parent / "data" / "secrets"
MAX_FALSE_POSITIVE_RATE = 0.01


def _secret_lines() -> list[tuple[str, str]]:
    rows = []
    for line in (DATA / "secrets.txt").read_text(encoding="utf-8").splitlines():
        if line.strip():
            kind, sentence = line.split("\t", 1)
            rows.append((kind, sentence.replace("\\n", "\n")))
    return rows


def _ordinary_lines() -> list[str]:
    return [line for line in (DATA / "ordinary.txt").read_text(encoding="utf-8").splitlines() if line.strip()]


SECRETS = _secret_lines()
ORDINARY = _ordinary_lines()


def catch_rates(secret_lines: list[str], ordinary_lines: list[str]) -> tuple[float, float]:
    """(share of secret lines with a finding, share of ordinary lines with a finding)."""
    caught = sum(1 for line in secret_lines if scan(line))
    flagged = sum(1 for line in ordinary_lines if scan(line))
    return caught / len(secret_lines), flagged / len(ordinary_lines)


def _flagged(text: str) -> list[str]:
    return [text[f.start : f.end] for f in scan(text)]


# --- the corpus ----------------------------------------------------------------------------------


def test_corpus_is_large_and_varied() -> None:
    assert len(SECRETS) >= 40
    assert len({kind for kind, _ in SECRETS}) >= 14
    assert len(ORDINARY) >= 220


def test_corpus_figures_catch_every_secret_and_flag_at_most_one_percent_of_ordinary_text() -> None:
    catch_rate, false_positive_rate = catch_rates([s for _, s in SECRETS], ORDINARY)
    print(
        f"\nsecrets caught: {catch_rate:.1%} of {len(SECRETS)}; "
        f"ordinary lines flagged: {false_positive_rate:.2%} of {len(ORDINARY)}"
    )
    assert catch_rate == 1.0
    flagged = {line: _flagged(line) for line in ORDINARY if scan(line)}
    assert false_positive_rate <= MAX_FALSE_POSITIVE_RATE, flagged


@pytest.mark.parametrize(("kind", "text"), SECRETS, ids=[f"{i}-{k}" for i, (k, _) in enumerate(SECRETS)])
def test_every_corpus_secret_is_found_as_its_kind(kind: str, text: str) -> None:
    assert kind in [f.kind for f in scan(text)]


@pytest.mark.parametrize(
    "text", [s for _, s in SECRETS], ids=[f"{i}-{k}" for i, (k, _) in enumerate(SECRETS)]
)
def test_redaction_and_description_never_show_the_secret(text: str) -> None:
    findings = scan(text)
    masked = redact(text, findings)
    message = describe(findings)
    for secret in _flagged(text):
        assert secret not in masked
        assert secret not in message
    assert scan(masked) == []  # the markers themselves are not secrets
    # Everything around the secrets survives, in order.
    kept = [text[a.end : b.start] for a, b in itertools.pairwise(findings)]
    assert masked.startswith(text[: findings[0].start])
    assert masked.endswith(text[findings[-1].end :])
    assert all(part in masked for part in kept)


# --- detectors, with literal expectations --------------------------------------------------------

GITHUB_TOKEN = "ghp_" + "Xk93hT2pLqR7sW4nB8vC1mZ6yD0eF5gH3jK9"  # fake


def test_password_in_url_flags_only_the_password() -> None:
    text = "my staging db is postgres://app:Xk93hT2pLq@db.internal:5432/app"
    assert scan(text) == [SecretFinding("password in URL", 32, 42, 1, 33, 1)]
    assert redact(text, scan(text)) == (
        "my staging db is postgres://app:[REDACTED:password-in-url]@db.internal:5432/app"
    )


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:password@host:5432/db",
        "https://user:****@proxy.corp:3128",
        "mysql://root:<password>@localhost/test",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
        "redis://:{{ redis_password }}@cache:6379",
        "http://localhost:8080/admin?next=a@b",
    ],
)
def test_placeholders_in_urls_are_not_secrets(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('password = "hunter2"', "hunter2"),
        ("DB_PASSWORD=s3cr3t!", "s3cr3t!"),
        ("passwd: correct-horse", "correct-horse"),
        ('pwd = "Tr0ub4dor&3"', "Tr0ub4dor&3"),
        ("PGPASSWORD=changeme", "changeme"),
        ("userPassword: 'correct horse battery staple'", "correct horse battery staple"),
        ("client_secret: 9Xk2-mQ7pL4vR8sW", "9Xk2-mQ7pL4vR8sW"),
        ("api_key=Zq81Lm4Kp0Vx7Rt2", "Zq81Lm4Kp0Vx7Rt2"),
        ("the wifi password is BlueFalcon42.", "BlueFalcon42"),
        ("The root password for the VM: Qw3rty!9xz", "Qw3rty!9xz"),
        ("password: swordfish", "swordfish"),
        ("password = swordfish and the user is bob", "swordfish"),
    ],
)
def test_assigned_and_stated_passwords_flag_the_value(text: str, secret: str) -> None:
    assert _flagged(text) == [secret]


@pytest.mark.parametrize(
    "text",
    [
        "password=",
        "password: ***",
        "password: <your-password>",
        "password: ${POSTGRES_PASSWORD}",
        'password: "{{ vault_db_password }}"',
        "secret=REDACTED",
        "token: ...",
        "password_min_length=12",
        "max_tokens=4096",
        "def login(username: str, password: str) -> Session:",
        'password = os.environ["DB_PASSWORD"]',
        "api_key = settings.openai_api_key",
        "if user_pass == 'git':",
        "I reset my password yesterday",
        "the password is in 1Password",
        "the token bucket rate limiter refills one token every 600 ms",
        # an instruction after a colon: a lowercase word, then more words
        "To rotate the staging database password: generate a new one in the vault, then redeploy.",
        "Forgot password: click the link in the email.",
        "Wifi password: check the sticker under the router",
    ],
)
def test_placeholders_references_and_prose_are_not_secrets(text: str) -> None:
    assert scan(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 broke it",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "request 550e8400-e29b-41d4-a716-446655440000 failed",
        "the publishable key pk_live_51Hx9kLm2Qp8Rt4Vw6Yz0Ab3 ships in the app",
        "camelCaseFunctionNamesThatAreLong and snake_case_names_that_are_long",
        "/home/alice/projects/hippograph/server/hippograph/secrets_scan.py",
        "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
        "version 2.14.0-rc.3+build.20260318 of cp311-cp311-manylinux_2_17_x86_64",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop",
        "-----BEGIN RSA PRIVATE KEY----- is the header of an old-style key",
    ],
)
def test_hashes_ids_paths_links_and_public_material_are_not_secrets(text: str) -> None:
    assert scan(text) == []


def test_overlapping_hits_merge_under_the_most_specific_kind() -> None:
    text = f"token: {GITHUB_TOKEN}"
    assert scan(text) == [SecretFinding("github pat", 7, 47, 1, 8, 1)]


def test_a_private_key_block_is_one_finding_across_its_lines() -> None:
    body = "\n".join("".join(random.Random(i).choices(string.ascii_letters + "+/", k=64)) for i in range(3))
    text = (
        f"deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\nthanks"
    )
    [finding] = scan(text)
    assert (finding.kind, finding.location) == ("private key block", "lines 2-6")
    assert redact(text, [finding]) == "deploy key:\n[REDACTED:private-key-block]\nthanks"


def test_findings_are_sorted_and_located_by_line_and_column() -> None:
    text = f"first line\n  gh {GITHUB_TOKEN}\npassword = 'hunter22'"
    findings = scan(text)
    assert [(f.kind, f.location) for f in findings] == [
        ("github pat", "line 2, characters 6-45"),
        ("password assignment", "line 3, characters 13-20"),
    ]


# --- redact and describe -------------------------------------------------------------------------


def test_redact_replaces_each_span_with_its_kind() -> None:
    text = f"gh {GITHUB_TOKEN} and AKIAQ4RT7XK2LM9PZ3WD"
    assert redact(text, scan(text)) == "gh [REDACTED:github-pat] and [REDACTED:aws-access-key-id]"


def test_describe_names_kind_and_place_and_says_what_to_do() -> None:
    text = f"my CI token is {GITHUB_TOKEN}"
    assert describe(scan(text)) == (
        "refused: the content contains a github pat (line 1, characters 16-55). hippograph never "
        "stores credentials: remove it and send the fact without it (e.g. 'the token is in "
        "1Password'), or set HIPPOGRAPH_SECRETS=redact to store it masked."
    )


def test_describe_lists_several_findings() -> None:
    findings = scan(f"AKIAQ4RT7XK2LM9PZ3WD\n{GITHUB_TOKEN}")
    message = describe(findings)
    assert message.startswith(
        "refused: the content contains an AWS access key id (line 1, characters 1-20) and "
        "a github pat (line 2, characters 1-40). hippograph never stores credentials: remove them"
    )


def test_describe_an_identifier_says_it_is_refused_even_when_masking() -> None:
    message = describe(scan(GITHUB_TOKEN), field="tags[0]", maskable=False)
    assert message.startswith("refused: tags[0] contains a github pat (line 1, characters 1-40).")
    assert "never stored masked" in message and "set HIPPOGRAPH_SECRETS=redact" not in message


def test_a_finding_built_by_hand_is_located_by_offsets() -> None:
    assert SecretFinding("JWT", 10, 50).location == "characters 11-50"


# --- robustness ----------------------------------------------------------------------------------

FRAGMENTS = [
    "a", "Z", "7", " ", "\n", "\t", "\x00", "=", ":", "/", "@", ".", "-", "_", "+", '"', "'", "é", "🎉",
    "ghp_", "sk-", "sk-ant-", "eyJ", "AKIA", "-----BEGIN ", "PRIVATE KEY-----", "-----END ",
    "password", "token", "secret", " is ", "=", "://", "Bearer ", "Xk93hT2pLqR7sW4nB8vC1mZ6", "[REDACTED:",
]  # fmt: skip


def _assert_well_formed(text: str, findings: list[SecretFinding]) -> None:
    for finding in findings:
        assert 0 <= finding.start < finding.end <= len(text)
        assert 1 <= finding.line <= finding.end_line
    for before, after in itertools.pairwise(findings):
        assert before.end <= after.start


@given(st.text())
def test_scan_never_raises_and_returns_ordered_disjoint_spans(text: str) -> None:
    _assert_well_formed(text, scan(text))


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join))
def test_scan_handles_secret_shaped_fragments_in_any_order(text: str) -> None:
    findings = scan(text)
    _assert_well_formed(text, findings)
    masked = redact(text, findings)
    assert all(
        text[f.start : f.end] not in describe(findings) for f in findings if len(text[f.start : f.end]) > 3
    )
    assert "[REDACTED:" in masked or not findings


RNG = random.Random(7)
ADVERSARIAL = {
    "long-run-then-equals": "a" * 50_000 + "=",
    "repeated-begin": "-----BEGIN " * 10_000,
    "repeated-key-headers": "-----BEGIN RSA PRIVATE KEY-----\n" * 3_000,
    "repeated-jwt-prefix": "eyJ" * 33_000,
    "repeated-openai-prefix": "sk-" * 33_000,
    "repeated-assignment": "password=" * 11_000,
    "url-without-at": "a://" + "b:" * 50_000,
    "repeated-prose": "the password for " * 6_000,
    "aws-context-then-base64": "aws " + "A1b/" * 25_000,
    "random-printable": "".join(RNG.choices(string.printable, k=100_000)),
    "random-base64": "".join(RNG.choices(string.ascii_letters + string.digits + "+/=-_", k=100_000)),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_large_adversarial_text_scans_without_backtracking_blowup(text: str) -> None:
    _assert_well_formed(text, scan(text))


@given(st.from_regex(secrets_scan._NOTHING_TO_FIND, fullmatch=True))
def test_the_shapes_scan_skips_are_ones_no_detector_flags(text: str) -> None:
    # Ids, times, numbers and very short strings are answered without running the detectors.
    assert list(secrets_scan._raw_findings(text)) == []


def test_a_random_token_is_a_secret_only_after_a_credential_word() -> None:
    nanoid = "V1StGXR8Z5jdHi6BmyT9qLw3"  # random by design
    assert scan(f"order {nanoid} is stuck") == []
    assert [f.kind for f in scan(f"the webhook secret {nanoid}")] == ["credential"]
    assert scan(f"the webhook secret {nanoid}", entropy=False) == []
    assert [f.kind for f in scan(GITHUB_TOKEN, entropy=False)] == ["github pat"]


LOG_VALUE = "NnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7"  # random, drawn for this test


@pytest.mark.parametrize(
    "line",
    [
        f"INFO api next_page_token={LOG_VALUE} status=200",
        f"the next page token is {LOG_VALUE}",
        f"the continuation token: {LOG_VALUE}",
        f'{{"nextPageToken": "{LOG_VALUE}"}}',
        "WARN auth object_key=uploads/2024/08/Kl9axx54SPe95frY.jpg status=404",
        f"INFO api correlationId={LOG_VALUE[:32]} user_id=17456",
        "ERROR auth device_id=5C9BCF35-873B-4078-B3B7-A50DF373CA53 method=GET",
        f"DEBUG api state={LOG_VALUE[:32]} cursor={LOG_VALUE[8:32]} nonce={LOG_VALUE[4:26]}",
        # a name before "=" (words, numbers, short parts) starts no token with its value
        "INFO sync device_id=O3joOj37HyVaQXekW9LctXb03rE done",
        "GET /feed?cursor_v2=O3joOj37HyVaQXekW9LctXb03rE&limit=20",
        "cache etag_md5=O3joOj37HyVaQXekW9LctX== hit",
    ],
)
def test_cursors_ids_and_paths_in_log_lines_are_not_secrets(line: str) -> None:
    # Until 2026-12-01 each was flagged: "token" in a page token's name, a key's name before an
    # object's path, the catch-all rule's "api" word before an id's name.
    assert scan(line) == []


@pytest.mark.parametrize(
    "line",
    [
        f"INFO api api_token={LOG_VALUE}",
        f"x-api-key: {LOG_VALUE}",
        f"the deploy key is {LOG_VALUE}",
        f"found {LOG_VALUE} in the terminal scrollback",
        # A page's token is Meta's page access token, not a cursor; "api" and "auth" name keys.
        f"FB_PAGE_TOKEN={LOG_VALUE}",
        "TELEGRAM_API_HASH=8b0e7153bf7c3706d85c524e44006655",
        f"auth_state={LOG_VALUE}",
        # A prefix that says token takes a short body even after an object's name.
        "ran the nightly job apikey_8fJ2kQ9xLm3NpR7vT1wZ by mistake",
        "user: zq_tok_8fJ2kQ9xLm3NpR7vT1wZ",
        f"DEBUG auth client_secret={LOG_VALUE} state=ok",
        f"session_token={LOG_VALUE}",
    ],
)
def test_keys_and_tokens_in_log_lines_are_still_secrets(line: str) -> None:
    assert scan(line) != []


# Fake tokens in the vendors' documented formats: the gitleaks rule names them, else the wider
# shape of `secret_formats` does (its names are capitalised).
VENDOR_TOKENS = {
    "AWS access key id": "A3TXK2LM9PZ3WDQ4RT7E",
    "DigitalOcean token": "dop_v1_" + "3f9a" * 16,
    "databricks api token": "dapi" + "0a1b2c3d" * 4,
    "Sentry token": "sntryu_" + "9c1e" * 16,
    "Airtable token": "patQ7rT2vX9kL3mN8." + "a1b2c3d4" * 8,
    "age secret key": "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
    "shopify access token": "shpat_" + "0f1e2d3c" * 4,
    "Hugging Face token": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
}


@pytest.mark.parametrize(("kind", "token"), VENDOR_TOKENS.items(), ids=VENDOR_TOKENS.keys())
def test_a_vendor_token_is_found_bare_in_a_sentence(kind: str, token: str) -> None:
    text = f"my token is {token}, use it"
    assert [(f.kind, text[f.start : f.end]) for f in scan(text)] == [(kind, token)]


def test_a_slack_webhook_url_is_found_in_prose() -> None:
    text = "post alerts to https://hooks.slack.com/services/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"
    assert [f.kind for f in scan(text)] == ["slack webhook url"]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "the Mattermost hook is https://chat.example.com/hooks/xj8k2m4n6p8q0r2s4t6u8v0w2y",
            "xj8k2m4n6p8q0r2s4t6u8v0w2y",
        ),
        (
            "trigger it with https://maker.ifttt.com/trigger/deploy/with/key/dK3mN9pQ2rS5tU8vW1xY4zA",
            "dK3mN9pQ2rS5tU8vW1xY4zA",
        ),
        ("alerts go to https://hooks.acme.io/T7f3kQ9zXbW2mN8pL4vR6sY1 now", "T7f3kQ9zXbW2mN8pL4vR6sY1"),
        (
            "CI posts to https://ci.example.com/hooks/42/u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO",
            "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO",
        ),
        ("license key=vault://Zx9Qw2Er7Ty1Ui8Op3AsDf", "vault://Zx9Qw2Er7Ty1Ui8Op3AsDf"),
        (
            "curl https://api.telegram.org/bot1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4/getMe",
            "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4",
        ),
    ],
)
def test_a_link_that_holds_a_hooks_or_a_keys_secret_is_found(text: str, secret: str) -> None:
    assert _flagged(text) == [secret]


@pytest.mark.parametrize(
    "text",
    [
        "GitHub sends events to https://api.github.com/repos/acme/web/hooks/48213377 now",
        "curl https://api.example.com/v1/keys/3f2a9c1e-77b2-4c1d-9e0a-5b6c7d8e9f01 returned 404",
        "hooks at https://hooks.example.com/services/billing/invoices work again",
        "See https://docs.stripe.com/keys/restricted-api-keys for the scopes",
        "GPG key: https://keys.openpgp.org/vks/v1/by-fingerprint/3AA5C34371567BD2",
        "https://console.cloud.google.com/apis/credentials/key/0a1b2c3d-4e5f-6789-abcd-ef0123456789?project=p",
        "https://dashboard.stripe.com/webhooks/we_1NqLzX2eZvKYlo2CabcdEF12",
        "https://webhooks.example.com/deliveries/9fceb02d0ae598e95dc970b74767f19372d61af8",
        "https://hookdeck.com/_next/static/chunks/app-4f5e6d7c8b9a1234.js",
        "https://acme.s3.amazonaws.com/token/Kl9aXz3QpR7mW2vT8nY4bC6d.png",
    ],
)
def test_links_to_hooks_and_keys_by_id_or_name_are_not_secrets(text: str) -> None:
    assert scan(text) == []


def test_a_long_prefixed_token_is_found_whole() -> None:
    body = "".join(random.Random(5).choices(string.ascii_letters + string.digits + "-_", k=1200))
    token = f"ya29.a0{body}Z"
    text = f"Just so it's written down somewhere: {token}"
    assert _flagged(text) == [token]


@pytest.mark.parametrize("password", ["U!srDvaI", "ujQt1;25", "Qx7#mP!z2"])
def test_a_password_near_a_services_key_is_found(password: str) -> None:
    assert _flagged(f"Swap the old PsExec key for {password} in the CI settings, please.") == [password]
    assert not scan("The GitLab key C++17/C11 flags differ between the two builds.")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # A vendor whose name ends in "site" has no public site key.
        ("The Pagesite key for staging is kT9vQ2mXr7LpW4zN8bY3cF6hJ.", "kT9vQ2mXr7LpW4zN8bY3cF6hJ"),
        # An id's prefix that carries a secret named as one: Stripe's client secrets.
        (
            "the checkout page got pi_3NxYz8LkdIwHu7ix0aBcDeFg_secret_Qw8rTy2UiOp4AsDf6GhJkL9Zx back",
            "pi_3NxYz8LkdIwHu7ix0aBcDeFg_secret_Qw8rTy2UiOp4AsDf6GhJkL9Zx",
        ),
        # Hex after a prefix that says key: a key, not a digest.
        ("Moving the nightly job over to acme-key-d35c790730359cca tonight.", "acme-key-d35c790730359cca"),
        # A UUID's groups of any letters and digits, stated as the key.
        ("guardian token: 8behgz86-dtzi-rkeu-8usb-cnhmbkel9hk1", "8behgz86-dtzi-rkeu-8usb-cnhmbkel9hk1"),
    ],
)
def test_keys_a_vendor_name_or_a_prefix_announces_are_found(text: str, secret: str) -> None:
    assert _flagged(text) == [secret]


def test_hex_after_an_ordinary_prefix_stays_an_id() -> None:
    assert scan("the build artefact app-4f9c2b71e08d3a56b7 was promoted") == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("mysql -u root -pS3cr3t shop", "S3cr3t"),
        ("mysqldump -uroot --password=Rd5v#x%SPq3y --all-databases", "Rd5v#x%SPq3y"),
        # gitleaks' curl rule masks the user with the password.
        ("curl -u alice:Pa55w0rd https://ci.internal/api/json", "alice:Pa55w0rd"),
        ("curl --user deploy:Copper9022$ -X POST https://registry.internal/v2/", "deploy:Copper9022$"),
        ("sshpass -p 'Tiger7621@' ssh pi@192.168.1.20", "Tiger7621@"),
        ("psql --host db --username app --password W1nter156", "W1nter156"),
        ("redis-cli -h cache -a Lemon49x ping", "Lemon49x"),
        ("smbclient //files/share -U bob%Velvet7844", "Velvet7844"),
        ("ldapsearch -x -D cn=admin,dc=corp -w A1r6VGvQ -b dc=corp", "A1r6VGvQ"),
        ("postgres://app:P@ssw0rd31@db.internal:5432/app", "P@ssw0rd31"),
    ],
)
def test_passwords_on_command_lines_and_in_urls_are_found(text: str, secret: str) -> None:
    assert _flagged(text) == [secret]


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p shop",  # -p alone prompts
        "curl -u alice: https://ci.internal/api",  # an empty password prompts too
        "mysql --password=$MYSQL_PWD shop",
        'sshpass -p "$(pass show nas)" ssh nas',
        "invoice in_1MtHbELkdIwHu7ixl4OzzPMv was paid twice",
        "refund price_1NBKGQLkdIwHu7ixDAJ2pKT8 and cus_NffrFeUfNV2Hib",
        'data-sitekey="6LcPQ7sZAAAAAJ5xkT9Fa1m0wq2YbB8vEhVr3uZs"',
        "the public reCAPTCHA site key is 6LcPQ7sZAAAAAJ5xkT9Fa1m0wq2YbB8vEhVr3uZs",
        "event 2ExZ1w3CqYvHb9tKfLm0sNpR4dU was delivered twice",  # a KSUID
        "golang.org/x/net v0.23.0 h1:7EYJ93RZ9vYSZAIb2x3lnuvqO5zneoD6IvWjuhfxjTs=",
        "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMr",
        "the configmap value decodes fine: eyJsb2dfbGV2ZWwiOiAiZGVidWciLCAid29ya2VycyI6IDR9",
        "https://app.datadoghq.com/logs?query=service%3Aapi&cols=Xk93hT2pLqR7&from_ts=1718000000000",
        "http://localhost:8080?next=a@b",
    ],
)
def test_ids_public_keys_encoded_config_and_prompts_are_not_secrets(text: str) -> None:
    assert scan(text) == []


def test_remember_refuses_a_secret_and_writes_nothing(memory: Memory) -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(SecretDetected) as refused:
        memory.remember(f"the deploy bot uses {key} for pushes")
    assert "github pat" in str(refused.value) and key not in str(refused.value)
    with pytest.raises(SecretDetected, match="entities"):
        memory.remember("the bot pushes releases", entities=[key])
    assert memory.stats()["facts"] == 0


def test_redact_setting_stores_the_fact_masked(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings.model_copy(update={"secrets": "redact"}), embedder=embedder)
    try:
        stored = memory.remember("staging db is postgres://app:Xk93hT2pLqZ7@db.internal:5432/app")
        assert "Xk93hT2pLqZ7" not in stored.content
        assert "[REDACTED:" in stored.content
        assert memory.search("staging database").results[0].id == stored.id
    finally:
        memory.close()


def test_two_assignments_on_one_line_are_each_an_assignment() -> None:
    # The word after a bare value is looked at (an instruction after a colon), not consumed.
    text = "password: hunter2 password: s3cr3t!x"
    assert _flagged(text) == ["hunter2", "s3cr3t!x"]
    kinds = {(text[s:e], k) for s, e, _, k in _raw_findings(text, entropy=False)}
    assert ("s3cr3t!x", "password assignment") in kinds
