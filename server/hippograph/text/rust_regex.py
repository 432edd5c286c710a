"""Rust's regular expressions (the ``regex`` crate) in Python's syntax.

Nosey Parker's and Titus's rules are written for Rust's engine: verbose mode (``(?x)``) ignores
whitespace inside character classes too, flags may be set in the middle of a pattern and hold to
the end of their group. `translate` resolves both, so Python's ``re`` reads the same language.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["translate"]


def _scoped(on: set[str], off: set[str]) -> str:
    on_, off_ = "".join(sorted(on & set("ims"))), "".join(sorted(off & set("ims")))
    return f"(?{on_}-{off_}:" if off_ else f"(?{on_}:"


def translate(pattern: str) -> tuple[str, str, list[dict[str, str]]]:
    """Rust regex -> (Python pattern body, its leading flags, capture groups).

    Verbose mode is resolved (whitespace and comments dropped, ``\\ `` and ``\\#`` made literal).
    Flags set at the start are returned apart; a flag set mid-pattern, such as ``(?s)``, holds to
    the end of its group in Rust and becomes a scoped ``(?s:...)`` here. Each capture group is
    ``{"text", "flags", "comment"}``: its body, the flags in force where it opens, and the first
    ``(?# ...)`` comment after it closes (before the next group opens).
    """
    out, i, n = "", 0, len(pattern)
    frames: list[dict[str, Any]] = [{"flags": set(), "group": None, "closes": 0}]
    groups: list[dict[str, str]] = []
    starts: list[int] = []
    last_closed: int | None = None
    leading: set[str] = set()
    while i < n:
        c, frame = pattern[i], frames[-1]
        verbose = "x" in frame["flags"]
        if c == "\\":
            out += pattern[i + 1] if pattern[i + 1] in " #" else pattern[i : i + 2]
            i += 2
        elif verbose and c.isspace():
            i += 1
        elif verbose and c == "#":
            end = pattern.find("\n", i)
            i = n if end < 0 else end
        elif c == "[":
            j, cls = i + 1, "["
            if pattern[j] == "^":
                cls, j = cls + "^", j + 1
            if pattern[j] == "]":
                cls, j = cls + "\\]", j + 1
            while pattern[j] != "]":
                if pattern[j] == "[":
                    raise ValueError("nested character class")
                if pattern[j] == "\\":
                    cls, j = cls + pattern[j : j + 2], j + 2
                    continue
                if not (verbose and pattern[j].isspace()):  # Rust ignores it in classes too
                    cls += pattern[j]
                j += 1
            out, i = out + cls + "]", j + 1
        elif pattern.startswith("(?#", i):
            end = pattern.index(")", i)
            if last_closed is not None and not groups[last_closed]["comment"]:
                groups[last_closed]["comment"] = pattern[i + 3 : end].strip()
            i = end + 1
        elif c == "(":
            m = re.match(r"\(\?([a-z]*)(?:-([a-z]*))?([:)])", pattern[i:])
            if m:
                on, off = set(m.group(1)), set(m.group(2) or "")
                if m.group(3) == ")" and not out and len(frames) == 1:
                    leading = (leading | on) - off
                elif m.group(3) == ")" and (on | off) & set("ims"):
                    out += _scoped(on, off)
                    frame["closes"] += 1
                if m.group(3) == ")":
                    frame["flags"] = (frame["flags"] | on) - off
                else:
                    out += _scoped(on, off)
                    frames.append({"flags": (frame["flags"] | on) - off, "group": None, "closes": 0})
                i += m.end()
                continue
            name = re.match(r"\(\?P?<(\w+)>", pattern[i:])
            if pattern.startswith("(?", i) and not name:
                raise ValueError(f"unsupported group at {pattern[i : i + 6]!r}")
            groups.append({"text": "", "flags": "".join(sorted(frame["flags"] & set("is"))), "comment": ""})
            starts.append(len(out) + (len(f"?P<{name.group(1)}>") if name else 0))
            out += f"(?P<{name.group(1)}>" if name else "("
            frames.append({"flags": set(frame["flags"]), "group": len(groups) - 1, "closes": 0})
            last_closed = None
            i += name.end() if name else 1
        elif c == ")":
            frames.pop()
            out += ")" * frame["closes"] + ")"
            if frame["group"] is not None:
                group = groups[frame["group"]]
                group["text"] = out[starts[frame["group"]] + 1 : -1]
                if not re.search(r"(?<!\\)\.", group["text"]):  # (?s) matters only to a dot
                    group["flags"] = group["flags"].replace("s", "")
                last_closed = frame["group"]
            i += 1
        else:
            out += c
            i += 1
    return out + ")" * frames[0]["closes"], "".join(sorted(leading & set("ims"))), groups
