"""One job per module: each opens with a line saying its job, and none grows past a few hundred lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "hippograph"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 400


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_opens_with_a_line_that_says_its_job(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and doc.splitlines()[0].strip(), path


def test_no_module_or_class_is_too_big_to_hold_one_job() -> None:
    too_big = []
    for path in MODULES:
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            too_big.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                too_big.append(f"{path.relative_to(PACKAGE)}: class {node.name}")
    assert too_big == []
