"""No process a sweep starts outlives it: SIGTERM (handled like Ctrl-C) and SIGKILL of a running ``ratio``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import ROOT

psutil = pytest.importorskip("psutil")


def _start_ratio(tmp_path) -> subprocess.Popen:
    # 20-job small instances: the ILP does not close within seconds, so a solve is running when the signal comes.
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [sys.executable, "-m", "primaldual.cli", "ratio", "--preset", "small", "--jobs", "20", "--instances", "2",
         "--schedulers", "oasis,fifo", "--workers", "2", "--time-limit", "120", "--no-progress",
         "--out", str(tmp_path / "r.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )


def _wait_for_solver(process: subprocess.Popen, timeout: float = 120.0) -> list:
    """The ratio's descendants once a solver process runs under a pool worker (a grandchild)."""
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        children = parent.children(recursive=True)
        if any(child.children() for child in parent.children()):
            return children
        time.sleep(0.2)
    pytest.fail("no solver process started in time")


def _alive(processes: list) -> list:
    out = []
    for p in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.fast_tier(1)  # SIGTERM in the fast tier, SIGKILL (about 2 s more) in the slow tier
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_process_outlives_a_killed_ratio(tmp_path, signum):
    process = _start_ratio(tmp_path)
    try:
        started = _wait_for_solver(process)
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=30)
        deadline = time.monotonic() + 5.0
        while _alive(started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(started), [(p.pid, p.name()) for p in _alive(started)]
        if signum == signal.SIGTERM:
            # the CLI-wide rule (tests/hardening/test_cli_wide.py): one line, exit 128 + SIGTERM
            assert process.returncode == 143 and "terminated (SIGTERM)" in err and "Traceback" not in err
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
