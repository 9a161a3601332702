"""What the repository tracks: sources, never what a machine installs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = (".venv", "node_modules", "static/vendor", "var")


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_nothing_installed_is_tracked_not_even_a_link_to_a_shared_virtualenv():
    # A worktree's `.venv` is often a symlink to a shared one; tracked, a checkout of
    # it replaces the shared virtualenv with the link.
    tracked = subprocess.run(
        ["git", "ls-files", "--", *INSTALLED], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked == []
