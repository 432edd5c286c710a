"""Dependencies point one way: MCP wiring / CLI -> service -> stores, retrieval, lifecycle -> models."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "hippograph"

# module -> hippograph modules it must never import (directly).
FORBIDDEN = {
    "models": {"*"},
    "errors": {"*"},
    "lifecycle": {"*", "!models", "!errors"},
    "secrets_scan": {"*", "!errors"},
    "query_intent": {"*", "!errors", "!models"},
    "validation": {"*", "!errors", "!models"},
    "entity_index": {"*", "!models"},
    "graph": {"memory", "mcp_app", "cli", "vectors", "retrieval"},
    "vectors": {"memory", "mcp_app", "cli", "graph"},
    "retrieval": {"memory", "mcp_app", "cli"},
    "memory": {"mcp_app", "cli", "shared", "explorer", "transfer"},
    "shared": {"mcp_app", "cli"},
    "transfer": {"mcp_app", "cli", "shared"},
    "explorer": {"mcp_app", "cli"},
    "mcp_app": {"cli"},
}
THIRD_PARTY_BANNED = {
    "lifecycle": {"kuzu", "lancedb", "mcp", "pyarrow", "fastembed", "numpy"},
    "models": {"kuzu", "lancedb", "mcp", "pyarrow", "fastembed"},
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_lower_layers_never_import_higher_ones() -> None:
    violations = []
    for path in PACKAGE.glob("*.py"):
        module = path.stem
        rules = FORBIDDEN.get(module)
        imported = _imports(path)
        ours = {name.split(".")[1] for name in imported if name.startswith("hippograph.")}
        if rules:
            allowed = {r[1:] for r in rules if r.startswith("!")}
            banned = ours - allowed if "*" in rules else ours & rules
            violations += [f"{module} imports hippograph.{b}" for b in sorted(banned)]
        for lib in THIRD_PARTY_BANNED.get(module, ()):
            if any(name == lib or name.startswith(lib + ".") for name in imported):
                violations.append(f"{module} imports {lib}")
    assert violations == []


def test_cypher_lives_only_in_the_graph_adapter() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.stem != "graph":
            assert "import kuzu" not in path.read_text(), path.name


def test_lance_lives_only_in_the_vector_adapter() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.stem != "vectors":
            assert "import lancedb" not in path.read_text(), path.name
