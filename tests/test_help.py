"""Every command and subcommand prints its help and exits 0 (a help string is formatted only when asked for,
so a bad one would otherwise surface as a user's traceback)."""

from __future__ import annotations

import pytest

from primaldual.cli import main

COMMANDS = [
    ["generate"], ["solve"], ["run"], ["verify"], ["compare"], ["ratio"], ["plot"], ["plot", "schedule"],
    ["reproduce"], ["schedulers"], ["bench", "offline"], ["bench", "oasis"], ["bench", "lbbsp"],
    ["lbbsp", "simulate"], ["lbbsp", "replay"], ["lbbsp", "cov"], ["lbbsp", "train"], ["lbbsp", "aggregate"],
    ["lbbsp", "generate"], ["lbbsp", "limits"], ["lbbsp", "sweep"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_help_prints_and_exits_zero(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_ratio_help_names_the_default_schedulers(capsys):
    from primaldual.sweep import DEFAULT_SCHEDULERS

    with pytest.raises(SystemExit):
        main(["ratio", "--help"])
    assert f"(default: {','.join(DEFAULT_SCHEDULERS)})" in " ".join(capsys.readouterr().out.split())
