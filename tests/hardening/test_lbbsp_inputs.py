"""LB-BSP inputs: every flag has a range (compared with the parsers), both edges of each, and trace files that
the readers refuse with file, line and the file's own column name (exit 2, one line, no traceback)."""

import argparse
import math

import numpy as np
import pytest

from primaldual.cli import build_parser, main
from primaldual.core.errors import InputError
from primaldual.lbbsp.flags import FLAGS, FlagRange, check_flags
from primaldual.lbbsp.replay import check_replay_size
from primaldual.lbbsp.traces import load_trace, parse_trace


def _subparsers(parser):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _parsers() -> dict:
    top = _subparsers(build_parser())
    parsers = {name: sub for name, sub in _subparsers(top["lbbsp"]).items()}
    parsers["bench lbbsp"] = _subparsers(top["bench"])["lbbsp"]
    return parsers


PARSERS = _parsers()


def _flags(parser) -> set:
    return {option for action in parser._actions for option in action.option_strings
            if option.startswith("--") and option != "--help"}


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_flag_has_a_range(command):
    assert command in FLAGS, f"lbbsp {command}: no entry in primaldual/lbbsp/flags.py FLAGS"
    assert _flags(PARSERS[command]) == set(FLAGS[command])


def _required(command: str) -> list:
    return {"replay": ["--trace", "pai:job_1"], "generate": ["--kind", "iid", "--output", "x.csv"],
            "sweep": ["--kind", "iid", "--seeds", "0"]}.get(command, [])


def _edges():
    for command, flags in FLAGS.items():
        for flag, kind in flags.items():
            if isinstance(kind, FlagRange):
                yield command, flag, kind


def _outside(kind: FlagRange):
    d = kind.domain
    if d.integer:
        return [d.low - 1, d.high + 1] if not kind.off else [1 if d.low == 2 else -1, d.high + 1, -1]
    low = d.low if d.low_open else math.nextafter(d.low, -math.inf)
    return [low, math.nextafter(d.high, math.inf), float("nan"), float("inf")]


@pytest.mark.parametrize("command, flag, kind", list(_edges()), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_both_edges_of_every_range(command, flag, kind):
    args = PARSERS[command].parse_args(_required(command))
    dest = flag.lstrip("-").replace("-", "_")
    d = kind.domain
    inside = [d.low, d.high] if not d.low_open else [math.nextafter(d.low, math.inf), d.high]
    inside = [int(v) for v in inside] if d.integer else inside
    for value in inside + ([0] if kind.off else []):
        setattr(args, dest, value)
        check_flags(command, args)
    for value in _outside(kind):
        setattr(args, dest, int(value) if d.integer else value)
        with pytest.raises(InputError, match=f"^{flag}: must be .*, got ") as error:
            check_flags(command, args)
        assert kind.describe() in str(error.value)


@pytest.mark.parametrize("argv, message", [
    (["lbbsp", "replay", "--trace", "pai:job_1", "--global-batch", "1000000000000"], "--global-batch: must be"),
    (["lbbsp", "sweep", "--kind", "iid", "--seeds", "0", "--global-batch", "1000000000000"], "--global-batch: must be"),
    (["lbbsp", "train", "--global-batch", "1000000000000"], "--global-batch: must be an integer in 2..4096"),
    (["lbbsp", "train", "--iterations", "1000000000000"], "--iterations: must be an integer in 1..10000"),
    (["lbbsp", "train", "--iterations", "10000", "--global-batch", "4096"], "emulated seconds"),
    (["lbbsp", "generate", "--kind", "iid", "--workers", "1000000000000", "--output", "x.csv"], "--workers: must be"),
    (["lbbsp", "generate", "--kind", "iid", "--iterations", "1000000000000", "--output", "x.csv"], "--iterations:"),
    (["lbbsp", "generate", "--kind", "iid", "--iterations", "100000", "--workers", "1000", "--output", "x.csv"],
     "--workers x --iterations: 100,000,000 is more than 10,000,000"),
    (["lbbsp", "generate", "--kind", "amplified", "--factor", "1e308", "--output", "x.csv"], "--factor: must be"),
    (["lbbsp", "generate", "--kind", "amplified", "--factor", "100", "--output", "x.csv"], "--factor: 100 amplifies"),
    (["lbbsp", "simulate", "--workers", "1000", "--iterations", "100000"], "--workers x --iterations"),
    (["lbbsp", "limits", "--workers", "1000", "--draws", "1000"], "--workers x --draws"),
    (["lbbsp", "sweep", "--kind", "iid", "--seeds", "0", "--iterations", "100000"], "--workers x --iterations"),
    (["lbbsp", "sweep", "--kind", "iid", "--seeds", "0-20000"], "traces (--seeds x --cov-jobs)"),
    (["bench", "lbbsp", "--seed", "4294967296"], "--seed: must be an integer in 0..4294967295"),
])
def test_runaway_flags_exit_2_in_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert not (tmp_path / "x.csv").exists()


SIMPLE, PAI = "worker,iteration,time\n", ",worker,gpu,time,batch_time_norm\n"


@pytest.mark.parametrize("header, row, message", [
    (SIMPLE, "1,0,5e-324", "t.csv:3: time must be in [1e-9, 1e9]"),
    (SIMPLE, "1,0,2.2250738585072014e-308", "t.csv:3: time must be in [1e-9, 1e9]"),
    (SIMPLE, "1,0,0", "t.csv:3: time must be > 0"),
    (SIMPLE, "1,0,1e300", "t.csv:3: time must be in [1e-9, 1e9]"),
    (SIMPLE, "1,0,1e400", "t.csv:3: time must be finite"),
    (SIMPLE, "1,0,nan", "t.csv:3: time must be finite"),
    (SIMPLE, "1,1e300,1", "t.csv:3: iteration must be an integer"),
    (SIMPLE, "1,0,1e-9", None),
    (SIMPLE, "1,0,1e9", "t.csv:3: time 1e+09 is more than 1e12 times"),
    (PAI, "1,1,100,0,5e-324", "t.csv:3: batch_time_norm must be in [1e-9, 1e9]"),
    (PAI, "1,1,100,0,nan", "t.csv:3: batch_time_norm must be finite"),
    (PAI, "1,1,100,0,1e300", "t.csv:3: batch_time_norm must be in [1e-9, 1e9]"),
    (PAI, "1,1,100,0.5,1", "t.csv:3: time must be an integer"),
    (PAI, "1,-1,100,0,1", "t.csv:3: worker must be >= 0"),
    (PAI, '1,1,100,0,"1e300"', "t.csv:3: batch_time_norm must be in [1e-9, 1e9]"),
])
def test_trace_values_that_cannot_be_computed_with(header, row, message):
    first = "0,0,1e-4\n" if header == SIMPLE else "0,0,100,0,1e-4\n"
    text = header + first + row + "\n" + ("0,1,1\n1,1,1\n" if header == SIMPLE else "2,0,100,1,1\n3,1,100,1,1\n")
    if message is None:
        assert parse_trace(text, "t.csv").n_workers == 2
        return
    with pytest.raises(InputError) as error:
        parse_trace(text, "t.csv")
    assert str(error.value).startswith(message), str(error.value)


def test_both_formats_give_the_same_message_but_their_own_column(tmp_path, capsys):
    for header, row, column in ((SIMPLE, "0,0,5e-324", "time"), (PAI, "0,0,100,0,5e-324", "batch_time_norm")):
        path = tmp_path / "t.csv"
        path.write_text(header + row + "\n")
        assert main(["lbbsp", "replay", "--trace", str(path), "--json"]) == 2
        err = capsys.readouterr().err
        assert f"t.csv:2: {column} must be in [1e-9, 1e9]" in err and len(err.strip().splitlines()) == 1


def test_a_trace_above_the_replay_limit_is_refused_before_any_work(tmp_path, capsys):
    iterations = 20_001
    rows = "\n".join(f"{i},{t},{1 + (i * 7 + t) % 5}" for t in range(iterations) for i in range(10))
    path = tmp_path / "big.csv"
    path.write_text(SIMPLE + rows + "\n")
    assert main(["lbbsp", "replay", "--trace", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert "200,010 data lines; a replay handles at most 200,000 cells" in err and "docs/lbbsp-traces.md" in err
    # Within the line count, the cells of the parsed trace are checked too (iterations x workers).
    with pytest.raises(InputError, match="200,010 cells; a replay handles at most 200,000"):
        check_replay_size(load_trace(str(path)))


def test_a_wide_trace_above_the_worker_limit_is_refused():
    text = SIMPLE + "".join(f"{i},0,1\n{i},1,1\n" for i in range(1001))
    with pytest.raises(InputError, match="1001 workers .* at most 1000"):
        parse_trace(text, "wide.csv")


def test_the_fast_and_the_row_by_row_reader_agree():
    rng = np.random.default_rng(0)
    rows = [f"{i},{t},{rng.uniform(0.5, 2)!r}" for t in range(30) for i in range(4)]
    plain = SIMPLE + "\n".join(rows) + "\n"
    quoted = SIMPLE + "\n".join(f'"{r}"'.replace(",", '","') for r in rows) + "\n"  # forces the csv reader
    a, b = parse_trace(plain, "a"), parse_trace(quoted, "b")
    assert np.array_equal(a.times, b.times) and np.array_equal(a.iterations, b.iterations)
