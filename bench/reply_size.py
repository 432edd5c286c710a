"""How many tokens a client's model pays for hippograph's replies: tools/list, a search, a recall.

    python -m bench.reply_size              # prints a table, writes bench/results/reply_size.md
    python -m bench.reply_size --no-write   # prints only

A fresh store gets 60 facts (people, projects, dated events, preferences); then, over an
in-memory MCP client, it measures the tools/list result (with and without output schemas,
as compact JSON), a search with limit=10, and recall at its default budget and at 300.
A reply counts as the text content the client gets. Tokens are counted with the embedding
model's own tokenizer (all-MiniLM-L6-v2 WordPiece, no special tokens), read straight from
the model files, so the script measures any hippograph checkout the same way: put that
checkout's ``server/`` first on PYTHONPATH to measure it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from tokenizers import Tokenizer

from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.mcp_app import build_server
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder, assemble_default_model

RESULTS = Path(__file__).resolve().parent / "results" / "reply_size.md"

PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Esra", "Farid"]
PROJECTS = ["Apollo", "Borealis", "Cascade"]
TEMPLATES = [
    "{p} prefers green tea over coffee in the morning",
    "{p} leads the {q} project and reviews its releases on Thursdays",
    "{p} moved to a new flat near the river in {month} 2024",
    "{p} is allergic to peanuts and avoids Thai restaurants",
    "{p} presented the {q} roadmap to the board in {month} 2024",
    "{p} asked to be reminded about the {q} budget review every quarter",
    "{p} likes hiking in the Alps and plans a trip for the summer",
    "{p} switched the {q} CI from Jenkins to GitHub Actions",
    "{p} thinks the {q} API should stay backwards compatible",
    "{p} celebrated a birthday with the {q} team in {month} 2024",
]
MONTHS = ["January", "March", "May", "July", "September", "November"]


def facts() -> list[dict[str, Any]]:
    items = []
    for i, person in enumerate(PEOPLE):
        for j, template in enumerate(TEMPLATES):
            project, month = PROJECTS[(i + j) % 3], MONTHS[(i + j) % 6]
            items.append(
                {
                    "content": template.format(p=person, q=project, month=month),
                    "entities": [person, project] if "{q}" in template else [person],
                    "event_time": f"2024-{(i + j) % 12 + 1:02d}-{j + 1:02d}",
                    "tags": ["bench"],
                }
            )
    return items


class Counter:
    """Tokens of a text by the embedding model's tokenizer, without truncation or special tokens."""

    def __init__(self, models_dir: Path) -> None:
        self.tokenizer = Tokenizer.from_file(str(assemble_default_model(models_dir) / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def measure(models_dir: Path) -> dict[str, int]:
    count = Counter(models_dir)
    embedder = FastEmbedder(DEFAULT_MODEL, models_dir)
    with tempfile.TemporaryDirectory() as tmp:
        memory = SharedMemory.open(
            Settings(data_dir=Path(tmp) / "data", models_dir=models_dir), embedder=embedder
        )
        try:
            memory.remember_many(facts())
            async with Client(build_server(memory)) as client:
                tools = [
                    t.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for t in (await client.list_tools()).tools
                ]
                no_output = [{k: v for k, v in t.items() if k != "outputSchema"} for t in tools]
                search = await client.call_tool("search", {"query": "what does Alice drink", "limit": 10})
                recall = await client.call_tool("recall", {"context": "Alice and the Apollo project"})
                small = await client.call_tool(
                    "recall", {"context": "Alice and the Apollo project", "budget_tokens": 300}
                )
        finally:
            memory.close()

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    return {
        "tools/list (all 9 tools)": count(compact(tools)),
        "tools/list without output schemas": count(compact(no_output)),
        "search, 10 results": count(_text(search)),
        "recall, default budget": count(_text(recall)),
        "recall, budget_tokens=300": count(_text(small)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "hippograph-bench" / "models"
    )
    parser.add_argument("--no-write", action="store_true", help="print only, do not write the results file")
    args = parser.parse_args()
    figures = anyio.run(measure, args.models_dir)
    lines = ["| reply | tokens |", "|---|---:|", *(f"| {name} | {n:,} |" for name, n in figures.items())]
    print("\n".join(lines))
    if not args.no_write:
        RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
