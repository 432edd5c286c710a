"""The screen without its rule sets, on the formats of the rules it loads: a tuning measure.

    python -m bench.secrets_generic            # recall by corpus, false alarms, both ways
    python -m bench.secrets_generic --misses   # and the lines the rule-free detectors miss

A secret no loaded rule knows (a vendor none of gitleaks, Titus and Kingfisher names) is caught,
if at all, by the rule-free detectors: a random token after a credential word, after a prefix,
or on its own. Their recall on the formats the rules *do* know, with the rules switched off, is
a large sample of real vendor shapes to tune them on, apart from the held-out TruffleHog corpus
(``bench.secrets_trufflehog``), whose formats stay unseen. Bare tokens in prose only: the forms
where no credential word helps. Nothing here is product code.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bench.secrets_corpus import DATA, read_tsv
from hippograph.text import secrets_scan

_BARE = ("bare vendor token in prose", "token in a plain sentence")


def corpora() -> dict[str, list[str]]:
    def lines(name: str, keep: Callable[[dict[str, str]], bool]) -> list[str]:
        return [row["text"] for row in read_tsv(DATA / name) if keep(row)]

    def prefixed_bare(row: dict[str, str]) -> bool:
        return row["form"] == "bare" and row["prefixed"] == "yes"

    return {
        "Nosey Parker's formats (Titus loads them), bare with a prefix": lines("heldout.tsv", prefixed_bare),
        "Kingfisher's formats (tuning corpus), bare with a prefix": lines("tuning.tsv", prefixed_bare),
        "gitleaks' formats, dev, bare in prose": lines("secrets_dev.tsv", lambda r: r["context"] in _BARE),
        "gitleaks' formats, test, bare in prose": lines("secrets_test.tsv", lambda r: r["context"] in _BARE),
    }


def ordinary() -> list[str]:
    return [
        row["text"]
        for name in ("heldout_ordinary.tsv", "ordinary_dev.tsv", "ordinary_test.tsv")
        for row in read_tsv(DATA / name)
    ]


@contextmanager
def rules_off() -> Iterator[None]:
    """The scanner with no vendor rule: gitleaks', the YAML rule sets' and the wider vendor shapes."""
    saved = (secrets_scan.rule_findings, secrets_scan.yaml_rule_findings, secrets_scan._wider_findings)
    secrets_scan.rule_findings = lambda text: iter(())
    secrets_scan.yaml_rule_findings = lambda text: iter(())
    secrets_scan._wider_findings = lambda text: iter(())
    try:
        yield
    finally:
        secrets_scan.rule_findings, secrets_scan.yaml_rule_findings, secrets_scan._wider_findings = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print the lines the rule-free detectors miss")
    args = parser.parse_args()
    sets, plain = corpora(), ordinary()
    full = {name: sum(bool(secrets_scan.scan(t)) for t in texts) for name, texts in sets.items()}
    alarms = sum(bool(secrets_scan.scan(t)) for t in plain)
    print("| corpus | rule-free detectors | whole screen |\n|---|---|---|")
    with rules_off():
        for name, texts in sets.items():
            missed = [t for t in texts if not secrets_scan.scan(t)]
            caught = len(texts) - len(missed)
            print(
                f"| {name} | {caught / len(texts):.1%} ({caught}/{len(texts)}) | "
                f"{full[name] / len(texts):.1%} ({full[name]}/{len(texts)}) |"
            )
            if args.misses:
                print("\n".join(f"missed: {t}" for t in missed))
        rule_free_alarms = sum(bool(secrets_scan.scan(t)) for t in plain)
    shown = f"{rule_free_alarms}/{len(plain)} | {alarms}/{len(plain)}"
    print(f"| ordinary developer text (false alarms) | {shown} |")


if __name__ == "__main__":
    main()
