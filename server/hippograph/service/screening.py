"""Screening: every string a write would store, scanned for secrets before it is checked or normalised.

``screen`` is the one screening function. ``Memory.call`` runs it on the arguments of every
operation that writes (``api`` declares which ones read only), so no write path and no field can
skip it: it walks every string of the arguments however nested (remember_many's items, and
the records of an imported file, which it decodes), and every field name. It runs before any
check, lowercasing or normalisation, so a secret cannot change shape on its way in.

What happens to a secret depends on the field holding it, the same on every path:

* prose (``PROSE``: content, object, evidence, a forget reason, an imported observation, an
  entity summary, a status reason): refused, or with ``HIPPOGRAPH_SECRETS=redact`` stored with
  each secret replaced by ``[REDACTED:<kind>]``.
* every other field is an identifier (tags, scope, session id, subject, predicate, a link's
  relation, entity names, aliases and types, ids, relation types and ends of an imported file,
  a correct query): refused in both settings. A masked identifier is not what the caller meant
  and merges things that differ: two entities named by two tokens would both be called
  ``[REDACTED:github-pat]``, a masked tag or scope would gather unrelated facts. A field
  added later is an identifier until it is listed as prose: refused, never stored.

Session ids are random by design (nanoids, hashes), so they are checked for credential formats
(a ``ghp_`` token), not for randomness. A refusal names every field that holds a secret, says
what kind and where, never what; nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hippograph.domain.errors import SecretDetected
from hippograph.store.malloc_arenas import release_free_memory
from hippograph.text import secret_rules_yaml, secrets_scan
from hippograph.text.secrets_scan import SecretFinding


def load() -> None:
    """Read the larger rule sets now, if no one has (they are read once): a server does so after
    its first call (``Memory._load_for_writes``), so that the first write screened need not."""
    secret_rules_yaml.rules()
    release_free_memory()  # what parsing the YAML took and freed (~15 MB with the recogniser's)


# Fields whose secrets may be masked in place (HIPPOGRAPH_SECRETS=redact): sentences, not names.
PROSE = frozenset({"content", "object", "evidence", "reason", "status_reason", "observations", "summary"})
# Random by design: scanned for credential formats only.
FORMATS_ONLY = frozenset({"session_id"})
# import_lines' argument: JSON text, screened record by record as the importers decode it.
JSON_LINES = "lines"
_NAMED = 5  # fields named in a refusal; the rest are counted


class _Screen:
    """One call's screening: the masked values, and the refusals found on the way."""

    def __init__(self, mode: str) -> None:
        self.mask = mode == "redact"
        self.refused: list[tuple[str, list[SecretFinding], bool]] = []  # (where, findings, prose)
        self._scanned: dict[tuple[str, bool], list[SecretFinding]] = {}  # imports repeat enums and ids

    def value(self, value: Any, where: str, field: str) -> Any:
        if isinstance(value, str):
            return self.text(value, where, field)
        if isinstance(value, Mapping):
            screened = {}
            for key, item in value.items():
                name = str(key)
                self.text(name, f"a field name in {where.rstrip(': ') or 'a record'}", "")
                screened[key] = self.value(item, _inside(where, name), name)
            return screened
        if isinstance(value, list | tuple):
            return type(value)(self.value(item, f"{where}[{i}]", field) for i, item in enumerate(value))
        return value

    def text(self, text: str, where: str, field: str) -> str:
        entropy = field not in FORMATS_ONLY
        findings = self._scanned.get((text, entropy))
        if findings is None:
            findings = self._scanned[text, entropy] = secrets_scan.scan(text, entropy=entropy)
        if not findings:
            return text
        prose = field in PROSE
        if prose and self.mask:
            return secrets_scan.redact(text, findings)
        self.refused.append((where.rstrip(": "), findings, prose))  # "line 3: " when a line is one string
        return text

    def lines(self, lines: list[str]) -> list[str]:
        """Each JSON line's record screened (a changed one written again); lines that do not
        parse are left to the importer, which refuses them. A file whose first line does not
        parse may be one pretty-printed object (the MCP memory server's older format)."""
        first = next((line for line in lines if line.strip()), "")
        if first and _decoded(first) is None:
            whole = _decoded("\n".join(lines))
            if whole is not None:
                screened = self.value(whole, "", "")
                return lines if screened == whole else [json.dumps(screened, ensure_ascii=False)]
        out = []
        for number, line in enumerate(lines, 1):
            record = _decoded(line) if line.strip() else None
            screened = record if record is None else self.value(record, f"line {number}: ", "")
            out.append(line if screened == record else json.dumps(screened, ensure_ascii=False))
        return out

    def raise_if_refused(self) -> None:
        if not self.refused:
            return
        where, findings, prose = self.refused[0]
        message = secrets_scan.describe(findings, field=where, maskable=prose)
        others = list(dict.fromkeys(w for w, _, _ in self.refused[1:] if w != where))
        if others:
            more = f" and {len(others) - _NAMED} more" if len(others) > _NAMED else ""
            message += f" These hold secrets too: {', '.join(others[:_NAMED])}{more}."
        raise SecretDetected(message + " Nothing was written.")


def _inside(where: str, name: str) -> str:
    """The path of field ``name`` of the record at ``where``: ``items[0].tags``, ``line 3: name``."""
    return f"{where}.{name}" if where and not where.endswith(" ") else f"{where}{name}"


def _decoded(line: str) -> Any:
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None


def screen(arguments: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """``arguments`` with the secrets of prose fields masked (``mode`` redact); raises
    ``SecretDetected`` if any field must refuse one (every field, when ``mode`` is refuse)."""
    screen = _Screen(mode)
    screened = {}
    for name, value in arguments.items():
        if name == JSON_LINES and isinstance(value, list):
            screened[name] = screen.lines(value)
        else:
            screened[name] = screen.value(value, name, name)
    screen.raise_if_refused()
    return screened
