"""Checks and normalises what callers send, before anything is written.

Each function returns the clean value or raises ``InvalidInput`` with a message that
names the field, says what was wrong, and says what to send instead.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import TypeVar

from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import GLOBAL_SCOPE, Source

E = TypeVar("E", bound=StrEnum)

_SCOPE = re.compile(r"^(global|project:[\w.\-/]{1,64}|session:[\w.\-]{1,128})$")
_SESSION = re.compile(r"^[\w.\-:]{1,128}$")
_TAG = re.compile(r"^[\w.\-/:#+]{1,64}$")
_FACT_ID = re.compile(r"^f_[0-9a-f]{16}$")
_ENTITY_ID = re.compile(r"^e_[0-9a-f]{16}$")
# Control characters other than tab and newline have no place in a memory.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

SHOWN_CHARS = 60  # most characters of a refused value an error quotes back

# What each value of a choice means, where its name alone may not say it.
_MEANINGS: dict[str, str] = {
    Source.USER_EDIT: "what the user said directly",
    Source.CONVERSATION: "learned in the conversation; the default",
    Source.FILE: "read from a file",
    Source.SYSTEM: "from a tool or the system",
    Source.IMPORT: "imported from another memory",
}


def shown(value: object) -> str:
    """A refused value as an error quotes it: its repr, cut to ``SHOWN_CHARS`` characters with '…'
    (a caller who sent 5,000 characters needs to know which value, not to read it back)."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return repr(value[: SHOWN_CHARS - 1] + "…")
    quoted = repr(value)
    return quoted if len(quoted) <= SHOWN_CHARS else quoted[: SHOWN_CHARS - 1] + "…"


def listed(values: Iterable[str]) -> str:
    """Allowed values as a reply lists them, each with its meaning where one is recorded."""
    return ", ".join(f"{value} ({_MEANINGS[value]})" if value in _MEANINGS else value for value in values)


def allowed(enum: type[StrEnum]) -> str:
    """An enum's values as a reply lists them (``listed``)."""
    return listed(member.value for member in enum)


def text(value: str, field: str, *, max_bytes: int, required: bool = True, statement: bool = False) -> str:
    """``value`` cleaned (control characters out, NFC, stripped); a ``statement`` (a fact's text)
    is told how to split, any other field to send something shorter."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}")
    cleaned = unicodedata.normalize("NFC", _CONTROL.sub(" ", value)).strip()
    if not cleaned and required:
        if statement:
            raise InvalidInput(f"{field} is empty: send one non-empty statement, e.g. 'Alice prefers tea'")
        raise InvalidInput(f"{field} is empty: send a non-empty value")
    size = len(cleaned.encode("utf-8"))
    if size > max_bytes:
        if statement:
            raise InvalidInput(
                f"{field} is {size} bytes, over the {max_bytes}-byte limit: split it into several "
                "shorter facts (one statement each) and send them separately"
            )
        raise InvalidInput(f"{field} is {size} bytes, over the {max_bytes}-byte limit: send a shorter one")
    return cleaned


def optional_text(value: str | None, field: str, *, max_bytes: int) -> str | None:
    if value is None:
        return None
    cleaned = text(value, field, max_bytes=max_bytes, required=False)
    return cleaned or None


def choice(value: str | None, enum: type[E], field: str, default: E) -> E:
    if value is None or value == "":
        return default
    try:
        return enum(value.strip().lower())
    except (ValueError, AttributeError):
        raise InvalidInput(f"{field} {shown(value)} is not known: use one of {allowed(enum)}") from None


def choices(
    values: str | Sequence[str] | None, enum: type[E], field: str, default: E
) -> tuple[str, ...] | None:
    """One value or a list of ``enum``'s, each checked as ``choice`` does; None when none is given."""
    if values is None or values == "" or values == []:
        return None
    listed = [values] if isinstance(values, str) else list(values)
    return tuple(choice(v, enum, field, default).value for v in listed)


def confidence(
    value: float | None, default: float, *, field: str = "confidence", ends: str = "0 (unsure) to 1 (certain)"
) -> float:
    """A number from 0 to 1 (``field`` names it in errors, ``ends`` says what its ends mean)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidInput(f"{field} must be a number from 0 to 1, got {shown(value)}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(f"{field} {shown(value)} is outside 0..1: send a number from {ends}")
    return float(value)


def query(value: str, field: str, *, max_chars: int) -> str:
    """A search query (or recall's context): words or a question, at most ``max_chars`` characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"the {field} must be text (words or a question), got {type(value).__name__}")
    cleaned = unicodedata.normalize("NFC", _CONTROL.sub(" ", value)).strip()
    if not cleaned:
        raise InvalidInput(f"the {field} is empty: send words or a question, e.g. 'where does Alice live'")
    if len(cleaned) > max_chars:
        raise InvalidInput(
            f"the {field} is {len(cleaned)} characters; send at most {max_chars}: "
            "the key words or one question"
        )
    return cleaned


def scope(value: str | None) -> str:
    if value is None or value == "":
        return GLOBAL_SCOPE
    cleaned = value.strip() if isinstance(value, str) else ""
    if not _SCOPE.match(cleaned):
        raise InvalidInput(
            f"scope {shown(value)} is not valid: use 'global', 'project:NAME' or 'session:ID' "
            "(letters, digits, '.', '-', '_')"
        )
    return cleaned


def session_id(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _SESSION.match(value):
        raise InvalidInput(
            f"session_id {shown(value)} is not valid: use up to 128 letters, digits, '.', '-', '_' or ':'"
        )
    return value


def tags(values: str | Sequence[str] | None, *, max_count: int) -> tuple[str, ...]:
    if not values:
        return ()
    if isinstance(values, str):  # one tag
        values = [values]
    if len(values) > max_count:
        raise InvalidInput(f"{len(values)} tags is over the limit of {max_count}: send the most useful ones")
    cleaned: list[str] = []
    for value in values:
        tag = value.strip().lower().replace(" ", "-") if isinstance(value, str) else ""
        if not _TAG.match(tag):
            raise InvalidInput(
                f"tag {shown(value)} is not valid: use 1-64 letters, digits or '.-_/:#+' (spaces become '-')"
            )
        if tag not in cleaned:
            cleaned.append(tag)
    return tuple(cleaned)


def names(values: str | Sequence[str] | None, field: str, *, max_count: int) -> tuple[str, ...]:
    if not values:
        return ()
    if isinstance(values, str):  # one name
        values = [values]
    if len(values) > max_count:
        raise InvalidInput(f"{len(values)} {field} is over the limit of {max_count}: send the main ones")
    cleaned: list[str] = []
    for value in values:
        name = text(value, f"an entry of {field}", max_bytes=200, required=False)
        if not name:
            raise InvalidInput(f"{field} has an empty name: send names like 'Alice' or 'Project Apollo'")
        if name.casefold() not in {c.casefold() for c in cleaned}:
            cleaned.append(name)
    return tuple(cleaned)


def limit(value: int | None, *, default: int, maximum: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(f"limit must be a whole number from 1 to {maximum}, got {shown(value)}")
    return value


def fact_id(value: str, field: str = "fact_id") -> str:
    if not isinstance(value, str) or not _FACT_ID.match(value.strip()):
        raise InvalidInput(
            f"{field} {shown(value)} is not a fact id: fact ids look like 'f_0123456789abcdef' "
            "(take them from remember or search results)"
        )
    return value.strip()


def node_id(value: str, field: str) -> str:
    if isinstance(value, str) and (_FACT_ID.match(value.strip()) or _ENTITY_ID.match(value.strip())):
        return value.strip()
    raise InvalidInput(
        f"{field} {shown(value)} is not a fact or entity id: ids look like 'f_0123456789abcdef' (fact) "
        "or 'e_0123456789abcdef' (entity)"
    )
