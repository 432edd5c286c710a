"""Mounts a test makes, undone for certain, and ones a killed run left behind, released.

A test that mounts a small file system (tests/e2e/test_faults.py) under pytest's temp dir and is
killed before it unmounts leaves a mount there; pytest's removal of old temp dirs then fails in a
later run's session cleanup with "Device or resource busy", so that run ends with no summary and
a failing exit status. ``unmount`` detaches lazily when a plain unmount is refused (a process
still holds a file), and ``release_leftovers`` unmounts whatever a killed run left under a
directory, at the start of a session.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or under ``root`` (deepest first), from /proc/self/mounts."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    root = root.resolve()
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 2:
            continue
        # /proc/mounts writes a space in a path as \040.
        point = Path(fields[1].replace("\\040", " "))
        if point == root or root in point.parents:
            found.append(point)
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def unmount(point: Path) -> None:
    """Unmount ``point``; if it is busy, detach it lazily (it goes once no one holds it)."""
    if subprocess.run(["umount", str(point)], capture_output=True, check=False).returncode != 0:
        subprocess.run(["umount", "-l", str(point)], capture_output=True, check=True)


def release_leftovers(root: Path) -> list[Path]:
    """Unmount every mount under ``root`` (what a killed run left); the points released."""
    released = []
    for point in mounts_under(root):
        try:
            unmount(point)
        except (OSError, subprocess.CalledProcessError):
            continue  # not ours to release (no root): the run goes on, as it did before
        released.append(point)
    return released
