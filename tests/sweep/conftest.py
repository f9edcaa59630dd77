"""Shared helpers of the sweep tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, timeout: float = 300, cwd=None) -> subprocess.CompletedProcess:
    """``python -m primaldual.cli ARGS`` in a fresh process (the real entry point, real exit code)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "primaldual.cli", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
    )


@pytest.fixture
def cli():
    return run_cli
