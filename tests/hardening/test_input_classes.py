"""Every class of malformed input, against every command that reads it: exit 2, one line naming the field.

The classes are the ones a new user hit (issue 12): numbers that overflow an int64 or a float, files that are
not UTF-8 or nest too deeply, integers too long for Python to convert, sizes that would allocate without
bound. Commands run in-process through :func:`primaldual.cli.main` (fast); test_processes.py runs a few as
real processes to show that no traceback reaches the terminal.
"""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.core.files import instance_to_dict
from primaldual.core.generate import generate

EMPTY_SCHEDULE = {"format": "primaldual.schedule", "version": 1, "jobs": []}


@pytest.fixture(scope="module")
def base() -> dict:
    return instance_to_dict(generate("small", seed=1))


def _edit(data: dict, path: tuple, value) -> dict:
    data = json.loads(json.dumps(data))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _text(data) -> str:
    return json.dumps(data)


def _swap_epochs(literal: str):
    """The instance text with job 0's epochs written as ``literal`` (a number json.dumps cannot produce)."""

    def make(base):
        data = _edit(base, ("jobs", 0, "epochs"), 777)
        return _text(data).replace('"epochs": 777', f'"epochs": {literal}', 1)

    return make


# (id, how to make the file's bytes or text from the base instance, what the one-line message must contain)
INSTANCE_CLASSES = [
    ("capacity 1e308", lambda b: _text(_edit(b, ("cluster", "worker_servers", 0, "cpu"), 1e308)),
     "cluster.worker_servers[0].cpu: must be a number in [0, 1e9], got 1e+308"),
    ("cpu capacity 1e19", lambda b: _text(_edit(b, ("cluster", "ps_servers", 2, "cpu"), 1e19)),
     "cluster.ps_servers[2].cpu: must be a number in [0, 1e9]"),
    ("not utf-8", lambda b: b"\xff\xfe" + _text(b).encode("utf-16-le"), "not UTF-8 text: byte 0xff at offset 0"),
    ("nested 100k deep", lambda b: "[" * 100_000 + "]" * 100_000, "malformed JSON: nested too deeply"),
    ("epochs 10^400", _swap_epochs("1" + "0" * 400), "jobs[0].epochs: must be an integer in 1..1e9, got an integer of 401 digits"),
    ("5000-digit integer", _swap_epochs("9" * 5000), "jobs[0].epochs: must be an integer in 1..1e9, got an integer of 5000 digits"),
    ("float 1e400", _swap_epochs("1e400"), "jobs[0].epochs: must be an integer in 1..1e9, got 1e400"),
    ("NaN literal", _swap_epochs("NaN"), "malformed JSON: NaN is not a JSON number"),
    ("utility 10^400", lambda b: _text(_edit(b, ("jobs", 1, "utility", "gamma1"), 10**400)),
     "jobs[1].utility.gamma1: must be a number in [0, 1e12], got an integer of 401 digits"),
    ("gradient_mb 1e308", lambda b: _text(_edit(b, ("jobs", 2, "gradient_mb"), 1e308)),
     "jobs[2].gradient_mb: must be a number in [0, 1e9], got 1e+308"),
    ("horizon 1e9", lambda b: _text(_edit(b, ("horizon",), 10**9)), "horizon: must be an integer in 1..100000, got 1000000000"),
    ("epochs 1e15", lambda b: _text(_edit(b, ("jobs", 0, "epochs"), 10**15)), "jobs[0].epochs: must be an integer in 1..1e9"),
    ("work too large", lambda b: _text(_edit(b, ("jobs", 0, "epochs"), 10**9)), "jobs[0]: work W = "),
    ("tiny positive demand", lambda b: _text(_edit(b, ("jobs", 3, "worker_demand", "cpu"), 1e-300)),
     "jobs[3].worker_demand.cpu: must be 0 or a number in [0.001, 1e9], got 1e-300"),
    ("boolean number", lambda b: _text(_edit(b, ("slot_seconds",), True)), "slot_seconds: must be a number in [1e-6, 1e9], got true"),
    ("top level array", lambda b: "[1, 2]", "top level: must be a JSON object, got list"),
    ("empty file", lambda b: "", "malformed JSON at line 1 column 1"),
]

#: Each command that reads an instance file, as a function of (instance path, a valid schedule path).
INSTANCE_COMMANDS = {
    "solve": lambda i, s: ["solve", i, "--time-limit", "5"],
    "run": lambda i, s: ["run", i, "--scheduler", "oasis"],
    "compare": lambda i, s: ["compare", i, "--schedulers", "fifo"],
    "verify": lambda i, s: ["verify", i, s],
}


def _write(path, content) -> str:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def _assert_refused(capsys, argv, expected: str) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in captured.err
    assert lines[0].startswith(f"primaldual {argv[0]}: error: ")


@pytest.mark.parametrize("command", sorted(INSTANCE_COMMANDS))
@pytest.mark.parametrize("label, make, expected", INSTANCE_CLASSES, ids=[c[0] for c in INSTANCE_CLASSES])
def test_instance_input_class_is_refused_by_every_command(tmp_path, capsys, base, command, label, make, expected):
    instance = _write(tmp_path / "i.json", make(base))
    schedule = _write(tmp_path / "s.json", _text(EMPTY_SCHEDULE))
    _assert_refused(capsys, INSTANCE_COMMANDS[command](instance, schedule), expected)


def _with_count(count_literal: str) -> str:
    data = {"format": "primaldual.schedule", "version": 1,
            "jobs": [{"job": 0, "workers": [[0, 0, 12345]], "parameter_servers": []}]}
    return json.dumps(data).replace("12345", count_literal)


SCHEDULE_CLASSES = [
    ("count 1e300", _with_count("1e300"), "jobs[0].workers[0]: count must be a number in [-1e9, 1e9], got 1e+300"),
    ("count 10^400", _with_count("1" + "0" * 400), "jobs[0].workers[0]: count must be a number in [-1e9, 1e9], got an integer of 401 digits"),
    ("count 5000 digits", _with_count("7" * 5000), "got an integer of 5000 digits"),
    ("count NaN", _with_count("NaN"), "malformed JSON: NaN is not a JSON number"),
    ("count as string", _with_count('"2"'), "count must be a number in [-1e9, 1e9], got '2'"),
    ("not utf-8", b"\x80" * 10, "not UTF-8 text: byte 0x80 at offset 0"),
    ("nested 100k deep", "{\"a\":" * 100_000 + "1" + "}" * 100_000, "malformed JSON: nested too deeply"),
    ("job index 10^400", json.dumps(EMPTY_SCHEDULE).replace("[]", '[{"job": 1' + "0" * 400 + "}]"),
     "jobs[0].job: must be a job index in 0..9, got an integer of 401 digits"),
]

SCHEDULE_COMMANDS = {
    "verify": lambda i, s: ["verify", i, s],
    "solve": lambda i, s: ["solve", i, "--start", s, "--time-limit", "5"],
}


@pytest.mark.parametrize("command", sorted(SCHEDULE_COMMANDS))
@pytest.mark.parametrize("label, content, expected", SCHEDULE_CLASSES, ids=[c[0] for c in SCHEDULE_CLASSES])
def test_schedule_input_class_is_refused_by_every_command(tmp_path, capsys, base, command, label, content, expected):
    instance = _write(tmp_path / "i.json", _text(base))
    schedule = _write(tmp_path / "s.json", content)
    _assert_refused(capsys, SCHEDULE_COMMANDS[command](instance, schedule), expected)


def test_a_schedule_for_an_empty_instance_says_it_has_no_jobs(tmp_path, capsys, base):
    empty = dict(base, jobs=[])
    instance = _write(tmp_path / "i.json", _text(empty))
    schedule = _write(tmp_path / "s.json", _with_count("1"))
    _assert_refused(capsys, ["verify", instance, schedule],
                    "a schedule of another instance: it schedules job 0, but INSTANCE has 0 jobs")


def test_a_folder_given_as_the_instance_is_refused(tmp_path, capsys):
    _assert_refused(capsys, ["verify", str(tmp_path), str(tmp_path)], "instance file expected, got a folder")


def test_hundreds_of_problems_give_a_bounded_message(base):
    from primaldual.core.errors import SHOWN_PROBLEMS, InputError
    from primaldual.core.files import instance_from_dict

    data = _edit(base, ("jobs",), [dict(job, epochs=0) for job in base["jobs"]] * 30)
    with pytest.raises(InputError) as error:
        instance_from_dict(data)
    assert len(error.value.problems) == 300
    lines = str(error.value).splitlines()
    assert len(lines) == SHOWN_PROBLEMS + 1
    assert lines[-1] == f"... and {300 - SHOWN_PROBLEMS} more problems"
