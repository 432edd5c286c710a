"""Claude Code's per-prompt hook: the facts a prompt finds with confidence and the warnings it
triggers are added to its context; an unrelated prompt adds nothing (issue 26)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hippograph.capture import run_claude_code_hook
from hippograph.config import Settings
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder


def _hook(settings: Settings, embedder: FastEmbedder, prompt: str) -> str:
    event = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        "cwd": "/home/ana/atlas",
        "session_id": "s",
    }
    out = io.StringIO()
    notes = run_claude_code_hook(
        io.StringIO(json.dumps(event)), out, settings, lambda s: SharedMemory.open(s, embedder=embedder)
    )
    assert notes == []
    return out.getvalue()


def test_a_prompt_gets_its_confident_facts_and_warnings_and_an_unrelated_one_nothing(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", models_dir=models_dir)
    memory = SharedMemory.open(settings, embedder=embedder)
    try:
        scope = "project:atlas"
        deploys = memory.remember("Atlas deploys go out on Tuesdays after the 10:00 standup.", scope=scope).id
        memory.remember("Ana's cat is called Miso.", scope=scope)
        never = memory.remember(
            "Never force-push to main: release tags point at its history.",
            kind="negative",
            triggers=["force push"],
            scope=scope,
        ).id
    finally:
        memory.close()

    context = _hook(settings, embedder, "On which day do Atlas deploys go out?")
    assert context.startswith("hippograph remembers, for this prompt (project:atlas):\n")
    assert f"[{deploys}]" in context and "Miso" not in context and "WARNING" not in context

    warned = _hook(settings, embedder, "Rebase my branch and force push it to main")
    assert f"- WARNING: Never force-push to main: release tags point at its history. [{never}]" in warned

    assert _hook(settings, embedder, "Which bank do I use for the mortgage?") == ""
