"""Every comma-separated list flag of every command, found from the argparse parsers, reads its list by one rule
(issue 65 item 7; primaldual/commands/_lists.py): a duplicate, an empty entry, an empty list and an entry with
spaces around it are each exit 2 with one line naming the flag, before anything runs or is written; a duplicate
gets the message ``compare --schedulers`` always gave (``listed twice``)."""

from __future__ import annotations

import argparse

import pytest

from primaldual.cli import main
from primaldual.commands._flags import FLAGS, NAMES, flag_name
from test_flag_ranges import COMMANDS
from test_path_kinds import _argv

LIST_FLAGS = [(path, action) for path, parser in COMMANDS.items() for action in parser._actions
              if not isinstance(action, argparse._HelpAction) and FLAGS[path][flag_name(action)] == NAMES]

CASES = [("a,b,a", "listed twice: a"), ("a,,b", "an empty entry in 'a,,b'"), ("a,", "an empty entry in 'a,'"),
         (",a", "an empty entry"), ("", "an empty list"), ("a, b", "' b' has spaces around it"),
         ("a ,b", "'a ' has spaces around it")]


def test_every_flag_that_takes_a_comma_list_is_read_as_one():
    for path, parser in COMMANDS.items():
        for action in parser._actions:
            if "comma-separated" in (action.help or "") or action.metavar in ("LIST", "A,B,..."):
                assert FLAGS[path][flag_name(action)] == NAMES, (path, flag_name(action))
    assert len(LIST_FLAGS) >= 13  # --schedulers of compare, ratio and bench trace, --vcs, --sizes, --seeds, ...


@pytest.mark.parametrize("path, action", LIST_FLAGS, ids=[f"{p}:{flag_name(a)}" for p, a in LIST_FLAGS])
def test_every_list_flag_refuses_duplicates_empty_entries_and_padding(tmp_path, monkeypatch, capsys, path, action):
    monkeypatch.chdir(tmp_path)
    name = flag_name(action)
    for value, words in CASES:
        code = main(_argv(path, COMMANDS[path], action, value))
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and f"error: {name}: {words}" in err, (value, err)
    assert list(tmp_path.iterdir()) == []
