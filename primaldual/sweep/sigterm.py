"""``primaldual bench sigterm``'s measurements: SIGTERM a real ``primaldual ratio`` at random moments and check how it ends.

Each kill starts ``primaldual ratio --preset tiny --instances N --out r.jsonl`` in a fresh folder, waits a
random delay (uniform in ``[--min-delay, --max-delay]`` seconds, seeded), sends SIGTERM and checks the three
rules of docs/input-ranges.md ("Signals"): exit status 143; at most one line on stderr, with no traceback and no
``resource_tracker`` leaked-semaphore warning; and no process of the command left (every process whose
parent chain leads to the command's pid, read from ``/proc`` right after it exits and again a second later).
Early delays land while the interpreter imports and while the pool starts its workers, late ones while
records are being written.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Kill:
    """One killed run: its delay, exit status, stderr and the processes it left behind."""

    delay: float
    returncode: int
    stderr: str
    left: tuple[int, ...]

    @property
    def lines(self) -> list[str]:
        """The stderr lines a terminal shows at the end (a progress bar redrawn with ``\\r`` and cleared is none)."""
        return [shown for line in self.stderr.split("\n") if (shown := line.rsplit("\r", 1)[-1].strip())]

    @property
    def ok(self) -> bool:
        lines = self.lines
        return (self.returncode == 143 and len(lines) <= 1 and "Traceback" not in self.stderr
                and "leaked" not in self.stderr and not self.left)


def _descendants(root: int) -> set[int]:
    """Live processes whose parent chain reaches ``root`` (orphans are re-parented, so they are also found
    through the session id the command's children inherit)."""
    parents, sessions = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # Zombies count: an orphan nobody reaps (an init that does not) is a process left behind too.
        parents[int(entry)], sessions[int(entry)] = int(fields[1]), int(fields[3])
    found = {pid for pid, session in sessions.items() if session == root and pid != root}
    for pid in parents:
        chain = pid
        while chain in parents and chain not in (0, 1):
            if parents[chain] == root:
                found.add(pid)
                break
            chain = parents[chain]
    return found


#: Seconds a child may take to end after the command: its watchdog's period plus a solver process's start-up.
GRACE_SECONDS = 5.0


def kill_once(delay: float, instances: int, folder: Path) -> Kill:
    """One run of ``ratio`` killed with SIGTERM after ``delay`` seconds (the process is its own session)."""
    script = Path(sys.executable).with_name("primaldual")  # the installed command, as a user runs it
    start = [str(script)] if script.is_file() else [sys.executable, "-m", "primaldual.cli"]
    command = [*start, "ratio", "--preset", "tiny", "--instances", str(instances),
               "--out", str(folder / "r.jsonl")]
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    time.sleep(delay)
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        return Kill(delay, -9, stderr + "\n(did not end within 60 s of SIGTERM)", ())
    # A child notices its parent is gone within its watchdog's period, but one still starting (a solver process
    # importing its modules) only once its start-up ends: what is alive after GRACE_SECONDS is left behind.
    deadline = time.monotonic() + GRACE_SECONDS
    while _descendants(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = tuple(sorted(_descendants(process.pid)))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return Kill(delay, process.returncode, stderr, left)


@dataclass(frozen=True)
class SigtermBench:
    """``bench sigterm``: every kill, and those that broke a rule."""

    kills: tuple[Kill, ...]

    @property
    def failures(self) -> list[Kill]:
        return [k for k in self.kills if not k.ok]

    def to_dict(self) -> dict:
        return {"kills": len(self.kills), "ok": len(self.kills) - len(self.failures),
                "failures": [{"delay": k.delay, "returncode": k.returncode, "stderr": k.stderr,
                              "left": list(k.left)} for k in self.failures]}


def run_kills(kills: int, instances: int, low: float, high: float, seed: int) -> SigtermBench:
    """``kills`` runs of ``ratio --instances instances``, each killed after a delay drawn uniformly in
    ``[low, high]`` seconds (seeded by ``seed``)."""
    rng = random.Random(seed)
    results = []
    for _ in range(kills):
        with tempfile.TemporaryDirectory(prefix="primaldual-sigterm-") as folder:
            results.append(kill_once(rng.uniform(low, high), instances, Path(folder)))
    return SigtermBench(tuple(results))


def format_sigterm_bench(result: SigtermBench) -> str:
    """The text of ``bench sigterm``."""
    kills, bad = result.kills, result.failures
    lines = [f"{len(kills) - len(bad)} of {len(kills)} SIGTERMs ended with 143, <= 1 stderr line, no orphan"]
    lines += [f"  delay {k.delay:.2f} s: exit {k.returncode}, {len(k.left)} left, stderr: {k.stderr.strip()!r}"
              for k in bad]
    return "\n".join(lines)


__all__ = ["GRACE_SECONDS", "Kill", "SigtermBench", "format_sigterm_bench", "kill_once", "run_kills"]
