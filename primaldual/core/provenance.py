"""Where a result came from: the code (version, git commit, uncommitted changes), the software, the machine and
the command line, as one JSON object every result file carries under ``provenance``.

:func:`provenance` returns::

    {"primaldual": {"version": "0.1.0", "commit": "51e5553...", "dirty": false},
     "python": "3.11.9", "numpy": "2.1.3", "pyomo": "6.8.0", "highspy": "1.8.0",
     "platform": "Linux-6.1-x86_64", "cpu": {"model": "Intel(R) Xeon(R) ...", "cores": 2},
     "command": "primaldual ratio --preset tiny --instances 4", "created_utc": "2026-12-02T14:05:00+00:00"}

The commit and the dirty flag (tracked files changed since that commit) are read with ``git`` when the package
runs from a checkout of its repository; installed from a wheel, or without ``git``, both are ``"unknown"``, never
guessed. Versions come from the installed distributions' metadata, so nothing is imported to read them (a
package that is not installed reads ``"not installed"``). The machine part is computed once per process (one
``git`` call of a few milliseconds); ``command`` is the command line :func:`set_command_line` recorded (the CLI
does, and child processes inherit it through the environment), else this process's ``sys.argv``.

Provenance is machine-dependent by nature: files keep it under its own key, which comparisons of results
across runs leave out (as they leave out ``timings``).
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

#: The key under which every result file and record keeps its provenance.
KEY = "provenance"
UNKNOWN = "unknown"
#: Child processes (sweep workers, the offline solve's child) read the command line from here.
COMMAND_ENVIRONMENT = "PRIMALDUAL_COMMAND_LINE"
_SOFTWARE = ("numpy", "pyomo", "highspy")


def set_command_line(argv: list[str]) -> None:
    """Record the command line (``["primaldual", "ratio", ...]``) for this process and the processes it starts."""
    os.environ[COMMAND_ENVIRONMENT] = shlex.join(argv)


def command_line() -> str:
    """The recorded command line, else this process's ``sys.argv`` (the script's name and its arguments)."""
    recorded = os.environ.get(COMMAND_ENVIRONMENT)
    if recorded:
        return recorded
    argv = list(sys.argv) or [""]
    program = ["python", argv[0]] if argv[0] in ("-c", "-m") else [Path(argv[0]).name or "python"]
    return shlex.join([*program, *argv[1:]])


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(root: Path, *arguments: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *arguments], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def code(root: Path | None = None) -> dict[str, Any]:
    """``{"version", "commit", "dirty"}``; commit and dirty are ``"unknown"`` unless ``root`` (by default the folder
    above the package) is a git checkout of the project."""
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    commit: Any = UNKNOWN
    dirty: Any = UNKNOWN
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        head = _git(root, "rev-parse", "HEAD")
        status = _git(root, "status", "--porcelain", "--untracked-files=no")
        if head and status is not None:
            commit, dirty = head.strip(), bool(status.strip())
    return {"version": _version("primaldual"), "commit": commit, "dirty": dirty}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, ``platform.processor()`` elsewhere), or ``"unknown"``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name.strip() in ("model name", "Processor", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or UNKNOWN


@functools.lru_cache(maxsize=1)
def machine() -> dict[str, Any]:
    """What does not change during a process: code, software versions, platform, CPU model and core count."""
    return {"primaldual": code(), "python": platform.python_version(),
            **{name: _version(name) for name in _SOFTWARE},
            "platform": platform.platform(), "cpu": {"model": cpu_model(), "cores": os.cpu_count() or UNKNOWN}}


def provenance() -> dict[str, Any]:
    """This process's provenance (:func:`machine`, the command line and the time, in UTC), as a fresh dict."""
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return {**machine(), "command": command_line(), "created_utc": now}


def describe(data: dict[str, Any]) -> str:
    """One line for a report: ``primaldual 0.1.0, commit 51e5553 (clean); Python ...; CPU ... (2 cores); command``."""
    package = data.get("primaldual") or {}
    commit = package.get("commit", UNKNOWN)
    dirty = package.get("dirty", UNKNOWN)
    state = UNKNOWN if dirty == UNKNOWN else ("uncommitted changes" if dirty else "clean")
    cpu = data.get("cpu") or {}
    software = ", ".join(f"{name} {data.get(name, UNKNOWN)}" for name in _SOFTWARE)
    return (f"primaldual {package.get('version', UNKNOWN)}, commit {commit} ({state}); Python "
            f"{data.get('python', UNKNOWN)}, {software}; {data.get('platform', UNKNOWN)}, CPU "
            f"{cpu.get('model', UNKNOWN)} ({cpu.get('cores', UNKNOWN)} cores); command "
            f"`{data.get('command', UNKNOWN)}`; {data.get('created_utc', UNKNOWN)}")


__all__ = ["COMMAND_ENVIRONMENT", "KEY", "UNKNOWN", "code", "command_line", "cpu_model", "describe", "machine",
           "provenance", "set_command_line"]
