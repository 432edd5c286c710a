"""Checks and normalises what callers send, before anything is written.

Each function returns the clean value or raises ``InvalidInput`` with a message that
names the field, says what was wrong, and says what to send instead.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from enum import StrEnum
from typing import TypeVar

from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import GLOBAL_SCOPE

E = TypeVar("E", bound=StrEnum)

_SCOPE = re.compile(r"^(global|project:[\w.\-/]{1,64}|session:[\w.\-]{1,128})$")
_SESSION = re.compile(r"^[\w.\-:]{1,128}$")
_TAG = re.compile(r"^[\w.\-/:#+]{1,64}$")
_FACT_ID = re.compile(r"^f_[0-9a-f]{16}$")
_ENTITY_ID = re.compile(r"^e_[0-9a-f]{16}$")
# Control characters other than tab and newline have no place in a memory.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def text(value: str, field: str, *, max_bytes: int, required: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}")
    cleaned = unicodedata.normalize("NFC", _CONTROL.sub(" ", value)).strip()
    if not cleaned and required:
        raise InvalidInput(f"{field} is empty: send one non-empty statement, e.g. 'Alice prefers tea'")
    size = len(cleaned.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(
            f"{field} is {size} bytes, over the {max_bytes}-byte limit: split it into several shorter "
            "facts (one statement each) and send them separately"
        )
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
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise InvalidInput(f"{field} {value!r} is not known: use one of {allowed}") from None


def choices(
    values: str | Sequence[str] | None, enum: type[E], field: str, default: E
) -> tuple[str, ...] | None:
    """One value or a list of ``enum``'s, each checked as ``choice`` does; None when none is given."""
    if values is None or values == "" or values == []:
        return None
    listed = [values] if isinstance(values, str) else list(values)
    return tuple(choice(v, enum, field, default).value for v in listed)


def confidence(value: float | None, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidInput(f"confidence must be a number from 0 to 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(
            f"confidence {value} is outside 0..1: send a number from 0 (unsure) to 1 (certain)"
        )
    return float(value)


def scope(value: str | None) -> str:
    if value is None or value == "":
        return GLOBAL_SCOPE
    cleaned = value.strip()
    if not _SCOPE.match(cleaned):
        raise InvalidInput(
            f"scope {value!r} is not valid: use 'global', 'project:NAME' or 'session:ID' "
            "(letters, digits, '.', '-', '_')"
        )
    return cleaned


def session_id(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not _SESSION.match(value):
        raise InvalidInput(
            f"session_id {value!r} is not valid: use up to 128 letters, digits, '.', '-', '_' or ':'"
        )
    return value


def tags(values: Sequence[str] | None, *, max_count: int) -> tuple[str, ...]:
    if not values:
        return ()
    if len(values) > max_count:
        raise InvalidInput(f"{len(values)} tags is over the limit of {max_count}: send the most useful ones")
    cleaned: list[str] = []
    for value in values:
        tag = value.strip().lower().replace(" ", "-") if isinstance(value, str) else ""
        if not _TAG.match(tag):
            raise InvalidInput(
                f"tag {value!r} is not valid: use 1-64 letters, digits or '.-_/:#+' (spaces become '-')"
            )
        if tag not in cleaned:
            cleaned.append(tag)
    return tuple(cleaned)


def names(values: Sequence[str] | None, field: str, *, max_count: int) -> tuple[str, ...]:
    if not values:
        return ()
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
        raise InvalidInput(f"limit must be a whole number from 1 to {maximum}, got {value!r}")
    return value


def fact_id(value: str, field: str = "fact_id") -> str:
    if not isinstance(value, str) or not _FACT_ID.match(value.strip()):
        raise InvalidInput(
            f"{field} {value!r} is not a fact id: fact ids look like 'f_0123456789abcdef' "
            "(take them from remember or search results)"
        )
    return value.strip()


def node_id(value: str, field: str) -> str:
    if isinstance(value, str) and (_FACT_ID.match(value.strip()) or _ENTITY_ID.match(value.strip())):
        return value.strip()
    raise InvalidInput(
        f"{field} {value!r} is not a fact or entity id: ids look like 'f_0123456789abcdef' (fact) "
        "or 'e_0123456789abcdef' (entity)"
    )
