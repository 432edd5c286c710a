"""Dependencies point one way, and the folders say which way:

    cli -> commands -> transports, capture -> mcp_app / explorer -> sharing -> service -> retrieval
        -> store -> text -> domain
    config, listening (HTTP listeners' limits), operations (how a declaration becomes a call)
    and wire (unreadable JSON-RPC messages) sit just above domain; api (the declared API) just
    above operations

A module may import its own package and any package below it, never one above.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "hippograph"

# Each unit of the package (a sub-package or a top-level module) and its layer: higher imports lower.
LAYERS = {
    "domain": 0,
    "config": 1,
    "listening": 1,
    "text": 1,
    "operations": 2,
    "api": 3,
    "wire": 2,
    "store": 3,
    "retrieval": 4,
    "service": 5,
    "sharing": 6,
    "explorer": 7,
    "mcp_resources": 6,
    "mcp_app": 7,
    "transports": 8,
    "capture": 8,
    "commands": 9,
    "cli": 10,
    "__main__": 11,
}
# Third-party engines each unit may touch: the stores own every database and the model.
ENGINES = {
    "kuzu", "ladybug", "lancedb", "fastembed", "pyarrow", "onnxruntime", "onnx", "spacy", "psycopg",
    "psycopg_pool",
}  # fmt: skip
ENGINE_OWNERS = {"store"}


def _unit(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else path.stem


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "hippograph":
                found |= {f"hippograph.{alias.name}" for alias in node.names}
    return found


def _modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE]


def test_every_unit_has_a_layer() -> None:
    assert {_unit(p) for p in _modules()} <= set(LAYERS)


def test_lower_layers_never_import_higher_ones() -> None:
    violations = []
    for path in _modules():
        unit = _unit(path)
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "hippograph" or len(parts) < 2 or parts[1] == "__version__":
                continue
            other = parts[1]
            if other != unit and LAYERS.get(other, -1) >= LAYERS[unit]:
                violations.append(f"{path.relative_to(PACKAGE)} imports hippograph.{other}")
    assert violations == []


def test_database_engines_and_the_model_appear_only_in_the_store() -> None:
    violations = []
    for path in _modules():
        unit = _unit(path)
        for name in _imports(path):
            if name.split(".")[0] in ENGINES and unit not in ENGINE_OWNERS:
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []


def test_cypher_lives_only_in_the_kuzu_session_and_statements() -> None:
    for path in _modules():
        if "import kuzu" in path.read_text() or "import ladybug" in path.read_text():
            assert path.parent.name == "store", path


def test_the_domain_and_text_import_no_database_mcp_or_numpy() -> None:
    banned = ENGINES | {"mcp", "numpy", "starlette", "uvicorn", "httpx2"}
    for path in _modules():
        if _unit(path) in ("domain", "text"):
            assert not {n.split(".")[0] for n in _imports(path)} & banned, path


def test_the_mcp_sdk_appears_only_in_the_mcp_wiring() -> None:
    for path in _modules():
        if "mcp" in {n.split(".")[0] for n in _imports(path)}:
            assert _unit(path) in ("mcp_app", "mcp_resources", "transports", "wire"), path


# What the layers above store/ may import of it: the seam (protocols and engine-neutral values),
# the one module that opens the engines, the embedding model, name finder, name typer and entity
# index, the process's cap on the C heaps the engines' threads use (set by the CLI before they
# start), the hand-back of the libraries' pages read while starting, and the child process that
# work on arrays runs in (its memory handed back when it exits).
STORE_FACES = {
    "seam",
    "backends",
    "embed",
    "ner",
    "name_typing",
    "entity_index",
    "malloc_arenas",
    "code_pages",
    "worker_process",
}


def test_above_the_store_only_the_seam_is_named_never_an_engine_module() -> None:
    violations = []
    for path in _modules():
        if LAYERS[_unit(path)] <= LAYERS["store"]:
            continue
        for name in _imports(path):
            parts = name.split(".")
            if parts[:2] == ["hippograph", "store"] and len(parts) > 2 and parts[2] not in STORE_FACES:
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert violations == []
