"""Provenance: the code, software, machine and command line of a result, honest where it cannot know."""

from __future__ import annotations

import json
import subprocess
import sys

from primaldual.cli import main
from primaldual.core.provenance import UNKNOWN, code, describe, provenance
from primaldual.sweep import Spec, deterministic_part, run


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    assert code(tmp_path) == {"version": code()["version"], "commit": UNKNOWN, "dirty": UNKNOWN}


def test_in_a_checkout_commit_and_dirty_flag_are_read(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    subprocess.run([*git, "add", "pyproject.toml"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert code(tmp_path)["commit"] == head and code(tmp_path)["dirty"] is False
    (tmp_path / "pyproject.toml").write_text("changed\n")
    assert code(tmp_path)["dirty"] is True


def test_the_command_line_is_the_cli_s(capsys):
    assert main(["run", "--preset", "tiny", "--scheduler", "fifo", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["provenance"]
    assert data["command"] == "primaldual run --preset tiny --scheduler fifo --json"
    assert data["cpu"]["cores"] >= 1 and data["python"] == ".".join(map(str, sys.version_info[:3]))
    line = describe(data)
    assert "commit" in line and "CPU" in line and data["command"] in line


def test_a_record_keeps_provenance_apart_from_what_runs_compare():
    spec = Spec(preset="tiny", seed=3, schedulers=("fifo",), opt=False)
    record = run(spec)
    assert set(record["provenance"]) >= {"primaldual", "cpu", "command", "numpy"}
    assert "provenance" not in deterministic_part(record)
    assert deterministic_part(run(spec)) == deterministic_part(record)
    assert provenance()["primaldual"] == record["provenance"]["primaldual"]
