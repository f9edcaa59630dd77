"""Every flag of every command, and every parameter of every built-in scheduler, has a type and a finite range
(primaldual/commands/_flags.py, primaldual/simulation/parameter_ranges.py; docs/input-ranges.md): the tables
are compared with the argparse parsers and the schedulers' signatures, and both edges of every range are
tried (just inside passes, just outside is one line naming the flag, the range and the value)."""

from __future__ import annotations

import argparse
import math

import pytest

from primaldual.cli import build_parser, main
from primaldual.commands._flags import FLAGS, SWITCH, check_command_flags, flag_name
from primaldual.core.errors import InputError
from primaldual.core.ranges import Boolean, Choice, FlagRange, PathText, PythonOnly, Text
from primaldual.simulation.parameter_ranges import PARAMETERS, parse_value
from primaldual.simulation.scheduler import _init_parameters, available_schedulers, make_scheduler, \
    scheduler_class

ROOT = build_parser()


def _commands(parser=ROOT, path=()):
    """(path, parser) of every command that has a handler (leaves of the subcommand tree)."""
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if action is None:
        yield " ".join(path), parser
        return
    for name, sub in action.choices.items():
        yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands())


def _flags(parser) -> dict[str, argparse.Action]:
    return {flag_name(a): a for a in parser._actions if not isinstance(a, argparse._HelpAction)}


def test_every_flag_of_every_command_has_a_range_and_every_range_a_flag():
    assert set(COMMANDS) == set(FLAGS)
    for path, parser in COMMANDS.items():
        assert set(_flags(parser)) == set(FLAGS[path]), path
        for name, action in _flags(parser).items():
            kind = FLAGS[path][name]
            if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
                assert kind == SWITCH, (path, name)
            elif action.type in (int, float):
                assert isinstance(kind, FlagRange), (path, name)  # every number is bounded
                assert math.isfinite(kind.domain.low) and math.isfinite(kind.domain.high)


def _namespace(path: str, dest: str, value) -> argparse.Namespace:
    """What argparse would give ``path`` with only ``dest`` set (every other flag at None)."""
    namespace = argparse.Namespace(**{a.dest: None for a in COMMANDS[path]._actions})
    parser, words = ROOT, path.split()
    for word in words:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        setattr(namespace, action.dest, word)
        parser = action.choices[word]
    setattr(namespace, dest, value)
    return namespace


def _edges(kind: FlagRange):
    """(inside, outside) values at both ends of ``kind``'s range."""
    low, high = kind.domain.low, kind.domain.high
    if kind.domain.integer:
        return [int(low), int(high)], [int(low) - 1, int(high) + 1]
    inside = [math.nextafter(low, math.inf) if kind.domain.low_open else low,
              math.nextafter(high, -math.inf) if kind.high_open else high]
    outside = [low if kind.domain.low_open else math.nextafter(low, -math.inf),
               high if kind.high_open else math.nextafter(high, math.inf), math.nan, math.inf]
    if kind.off:
        outside = [v for v in outside if v != 0]
    return inside, outside


NUMERIC = [(path, name) for path, table in FLAGS.items() for name, kind in table.items()
           if isinstance(kind, FlagRange)]


@pytest.mark.parametrize("path, name", NUMERIC, ids=[f"{p}:{n}" for p, n in NUMERIC])
def test_both_edges_of_every_numeric_flag(path, name):
    kind, action = FLAGS[path][name], _flags(COMMANDS[path])[name]
    inside, outside = _edges(kind)
    for value in inside:
        check_command_flags(ROOT, _namespace(path, action.dest, value))
    for value in outside:
        with pytest.raises(InputError) as raised:
            check_command_flags(ROOT, _namespace(path, action.dest, value))
        assert str(raised.value).startswith(f"{name}: must be {kind.describe()}, got ")


def _text_of(length: int, kind) -> str:
    """``length`` characters; for a path, in names of at most 255 bytes (the longest a file system holds)."""
    return ("x" * 254 + "/") * (length // 255) + "x" * (length % 255) if isinstance(kind, PathText) else "x" * length


def test_text_flags_are_bounded_in_length():
    for path, table in FLAGS.items():
        for name, kind in table.items():
            if isinstance(kind, Text):
                dest = _flags(COMMANDS[path])[name].dest
                check_command_flags(ROOT, _namespace(path, dest, _text_of(kind.length, kind)))
                with pytest.raises(InputError, match=f"^{name}: must be .* got a text of"):
                    check_command_flags(ROOT, _namespace(path, dest, _text_of(kind.length + 1, kind)))


@pytest.mark.parametrize("args, expected", [
    (["generate", "--jobs", "100001", "-o", "x.json"], "--jobs: must be an integer in 1..100000, got 100001"),
    (["solve", "i.json", "--gap", "1"], "--gap: must be a number in [0, 1), got 1.0"),
    (["ratio", "--time-limit", "nan"], "--time-limit: must be a number in (0, 1e6], got nan"),
    (["generate", "--jobs", "9" * 5000, "-o", "x.json"], "argument --jobs: must be an integer in ASCII decimal digits"),
    (["run", "--preset", "tiny", "--scheduler", "fifo", "--param", "skip_unfinishable=[]"],
     "scheduler fifo: skip_unfinishable: must be true or false, got []"),
    (["compare", "--preset", "tiny", "--schedulers", "oasis", "--param", "oasis.constants=3"],
     "scheduler oasis: constants: must be set from Python only"),
    (["run", "--preset", "tiny", "--scheduler", "oasis", "--param", "eta=" + "1" * 5000],
     "--param: a value of at most 1000 characters"),
])
def test_a_bad_flag_is_one_line_and_exit_2(args, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(args)
    except SystemExit as exit:  # argparse's own errors (a value that is not a number)
        code = exit.code
    assert code == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and len(err) < 600, err


# ------------------------------------------------------------------------------------ scheduler parameters


def test_every_parameter_of_every_builtin_scheduler_has_a_range():
    for name in available_schedulers():
        parameters = _init_parameters(scheduler_class(name))
        assert parameters is not None and name in PARAMETERS, name
        assert {p.name for p in parameters} == set(PARAMETERS[name]), name


def _parameter_cases():
    for name, table in PARAMETERS.items():
        for key, kind in table.items():
            yield name, key, kind


@pytest.mark.parametrize("name, key, kind", list(_parameter_cases()),
                         ids=[f"{n}.{k}" for n, k, _ in _parameter_cases()])
def test_every_scheduler_parameter_refuses_just_outside_and_structures(name, key, kind):
    bad = [[], {"a": 1}, "yes"]
    if isinstance(kind, FlagRange):
        inside, outside = _edges(kind)
        bad += outside
        for value in inside:
            assert kind.contains(value)
    elif isinstance(kind, Boolean):
        bad += [1, 0, "true", "false"]
    elif isinstance(kind, Choice):
        bad += [kind.names[0].upper(), 1]
    elif isinstance(kind, PythonOnly):
        bad += ["share", 1.0, 0]
    elif isinstance(kind, Text):
        bad = [[], {"a": 1}, "x" * (kind.length + 1)]
    for value in bad:
        with pytest.raises(InputError, match=f"^scheduler {name}: {key}: must be "):
            make_scheduler(name, **{key: value})


def test_booleans_are_true_or_false_never_truthiness():
    make_scheduler("fifo", skip_unfinishable=False)
    for text in ("[]", "0", '"false"', "False", "no"):
        with pytest.raises(InputError, match="skip_unfinishable: must be true or false"):
            make_scheduler("fifo", skip_unfinishable=parse_value(text))


def test_parameter_text_is_limited_in_size_and_depth_before_parsing():
    assert parse_value("[[[1]]]") == [[[1]]]
    with pytest.raises(InputError, match="nested at most 4 deep"):
        parse_value("[" * 5 + "]" * 5)
    with pytest.raises(InputError, match="at most 1000 characters"):
        parse_value("1" * 1001)


def test_every_range_is_in_the_docs():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "input-ranges.md").read_text()
    for path, table in FLAGS.items():
        for name, kind in table.items():
            if not path.startswith("lbbsp") and path != "bench lbbsp":
                row = f"| `{path}` | `{name}` | {'switch (no value)' if kind == SWITCH else kind.describe()} |"
                assert row in docs, row
    for scheduler, table in PARAMETERS.items():
        for name, kind in table.items():
            assert f"| `{scheduler}` | `{name}` | {kind.describe()} |" in docs, (scheduler, name)
