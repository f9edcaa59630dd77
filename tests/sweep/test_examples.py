"""Every experiment file in examples/ loads with the parser of the command it is for."""

from __future__ import annotations

import pytest

from primaldual.cli import build_parser
from primaldual.commands._config import apply_config, load_config

from .conftest import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def _parser(command: str):
    return build_parser().parse_args([command, "--out", "x"] if command == "reproduce" else [command]).parser


def test_there_are_examples_for_both_commands():
    assert {path.name.split("-")[0] for path in EXAMPLES} == {"ratio", "reproduce"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_an_example_loads_with_its_command(path):
    command = path.name.split("-")[0]
    settings = load_config(path, _parser(command))
    assert settings
    args = apply_config(build_parser().parse_args([command, "--config", str(path)]), _parser(command))
    if command == "reproduce":
        assert args.out and args.quick in (True, False)
    else:
        assert args.preset in ("tiny", "small") and args.instances >= 1 and args.schedulers


def test_reproduce_without_out_anywhere_is_refused(tmp_path, capsys):
    from primaldual.cli import main

    (tmp_path / "e.toml").write_text("quick = true\n")
    assert main(["reproduce", "--config", str(tmp_path / "e.toml")]) == 2
    assert "--out: required" in capsys.readouterr().err
