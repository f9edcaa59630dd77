"""Every path flag of every command, found from the argparse parsers, meets every kind of path (issue 65;
primaldual/core/paths.py, docs/input-ranges.md "Paths"): ``''``, ``-``, a FIFO, a character device, a link to a
FIFO, a trailing ``/``, the file system's root as a folder (a folder where a file is expected, and the reverse,
is each writer's check: tests/sweep/test_cli.py, tests/hardening/test_output_paths.py).
Each is exit 2 with one line naming the flag, before anything is opened: nothing is read (a FIFO would block,
a device never end), written, replaced or left behind.

The nodes are made inside the test's folder (never ``/dev``), so a broken rule can only damage the test's own
files; a read that blocks ends the test by an alarm instead of hanging the suite."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import stat

import pytest

from primaldual.cli import main
from primaldual.commands._flags import FLAGS, PATH_RULES, flag_name, kind_of
from primaldual.core.paths import EITHER, FILE, FOLDER
from test_flag_ranges import COMMANDS

#: The last word of an argument's dest (or its metavar) that says it names a file: such an argument must have
#: a path kind in the flag table, so a new path flag tabled as plain text fails here.
PATH_WORDS = {"out", "output", "config", "start", "mps", "csv", "trace", "base", "straggle", "instance", "schedule",
              "source", "paths"}

#: (label, path in the test folder, words of the expected message), by what the flag reads or writes.
EVERY = [("empty", "", "an empty path"), ("dash", "-", "'-' (standard input or output) is not supported"),
         ("fifo", "fifo", "is a FIFO (named pipe), not a regular file"),
         ("device", "device", "is a character device, not a regular file"),
         ("link to a fifo", "link", "is a FIFO (named pipe), not a regular file")]
KINDS = {
    (False, FILE): [*EVERY, ("file/", "afile.json/", "ends in '/', which names a folder")],
    (True, FILE): [*EVERY, ("new/", "new/", "ends in '/', which names a folder")],
    (True, FOLDER): [*EVERY, ("root", "/", "is the file system's root")],
    (True, EITHER): EVERY,
}


def _path_flags():
    """(command, argparse action, (write, expect)) of every path argument of every command's parser."""
    found = []
    for path, parser in COMMANDS.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            rule = PATH_RULES.get(kind_of(FLAGS[path][flag_name(action)]))
            if rule is not None:
                found.append((path, action, rule))
    return found


PATH_FLAGS = _path_flags()


def test_every_argument_named_like_a_file_has_a_path_kind():
    checked = {(path, action.dest) for path, action, _ in PATH_FLAGS}
    for path, parser in COMMANDS.items():
        for action in parser._actions:
            words = {action.dest.split("_")[-1], str(action.metavar or "").split(".")[0].lower()}
            if words & PATH_WORDS:
                assert (path, action.dest) in checked, (path, action.dest)
    assert len(PATH_FLAGS) >= 25  # every -o/--out, INSTANCE, SCHEDULE, --start, --config, trace, ...


def _filler(action: argparse.Action) -> list[str]:
    """A harmless value for a required argument that is not under test (never a path that exists)."""
    if action.choices:
        return [str(next(iter(action.choices)))]
    return ["0-1" if action.dest == "seeds" else "fifo" if action.dest == "scheduler" else "missing.json"]


def _argv(path: str, parser, target: argparse.Action, value: str) -> list[str]:
    argv = path.split()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        option = max(action.option_strings, key=len, default="")
        if action is target:
            argv += [f"{option}={value}"] if option else [value]
        elif action.required or (not option and action.nargs is None):
            argv += ([option] if option else []) + _filler(action)
    for group in parser._mutually_exclusive_groups:  # lbbsp replay: one of --trace, --cov-job
        if group.required and target not in group._group_actions:
            first = group._group_actions[0]
            argv += [max(first.option_strings, key=len)] + _filler(first)
    return argv


def _listing(folder) -> list[tuple]:
    """What ``ls -la`` shows of everything under ``folder``: name, kind of node, size, modification time."""
    out = []
    for root, folders, files in os.walk(folder):
        for name in sorted(folders + files):
            info = os.lstat(os.path.join(root, name))
            out.append((os.path.relpath(os.path.join(root, name), folder), stat.S_IFMT(info.st_mode),
                        info.st_size, info.st_mtime_ns))
    return out


class Hung(BaseException):
    """A read blocked (a FIFO opened): the rule failed. BaseException, so no handler turns it into exit 2."""


@contextlib.contextmanager
def _deadline(seconds: int):
    def hung(signum, frame):
        raise Hung(f"still running after {seconds} s: a FIFO or device was opened")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture()
def nodes(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "fifo")
    try:
        os.mknod(tmp_path / "device", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    except PermissionError:
        pass  # not root: the device case is skipped below
    (tmp_path / "link").symlink_to(tmp_path / "fifo")
    (tmp_path / "afile.json").write_text("{}\n")
    (tmp_path / "folder").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path, action, rule", PATH_FLAGS,
                         ids=[f"{p}:{flag_name(a)}" for p, a, _ in PATH_FLAGS])
def test_every_path_flag_refuses_every_odd_path_in_one_line_touching_nothing(nodes, capsys, path, action, rule):
    name = flag_name(action)
    for label, value, words in KINDS[rule]:
        if value == "device" and not (nodes / "device").exists():
            continue
        before = _listing(nodes)
        with _deadline(20):
            code = main(_argv(path, COMMANDS[path], action, value))
        err = capsys.readouterr().err
        assert code == 2, (label, err)
        assert err.count("\n") == 1 and f"error: {name}: " in err and words in err, (label, err)
        assert _listing(nodes) == before, label  # nothing written, replaced or left behind


@pytest.mark.parametrize("command", ["ratio", "reproduce"])
def test_a_path_from_an_experiment_file_meets_the_same_rule(nodes, capsys, command):
    (nodes / "exp.toml").write_text('out = "fifo"\n')
    before = _listing(nodes)
    with _deadline(20):
        code = main([command, "--config", "exp.toml"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "error: --out: 'fifo' is a FIFO" in err, err
    assert _listing(nodes) == before


def test_an_output_through_a_link_to_a_file_writes_the_file_and_keeps_the_link(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.json").write_text("old\n")
    (tmp_path / "link.json").symlink_to("real.json")
    assert main(["generate", "--preset", "tiny", "-o", "link.json"]) == 0
    assert (tmp_path / "link.json").is_symlink()
    assert '"format": "primaldual.instance"' in (tmp_path / "real.json").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]  # no temporary left
