"""Command-line-wide rules: real processes print no traceback, SIGTERM ends a command like Ctrl-C, a command
missing its subcommand is a usage error, schedulers list their parameters, and CI runs the README verbatim."""

from __future__ import annotations

import inspect
import json
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.simulation.scheduler import GAVEL_POLICIES, available_schedulers, make_scheduler, scheduler_class

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "primaldual.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("files")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "binary.json").write_bytes(b"\xff\xfe\x00\x01")
    assert main(["generate", "--preset", "tiny", "--seed", "1", "-o", str(folder / "i.json")]) == 0
    data = json.loads((folder / "i.json").read_text())
    data["cluster"]["worker_servers"][0]["cpu"] = 1e308
    (folder / "big.json").write_text(json.dumps(data))
    return folder


# The first input in a real process in the fast tier, the other two (0.6 s a process) in the slow tier; the fast
# tier refuses both in this process (tests/hardening/test_input_classes.py).
@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("args, expected", [
    (["verify", "deep.json", "deep.json"], "malformed JSON: nested too deeply"),
    (["run", "binary.json", "--scheduler", "fifo"], "not UTF-8 text"),
    (["solve", "big.json"], "cluster.worker_servers[0].cpu: must be a number in [0, 1e9], got 1e+308"),
])
def test_a_real_process_prints_one_line_and_no_traceback(files, args, expected):
    done = _cli(*args, cwd=files)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and expected in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def _handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has installed a SIGTERM handler (bit 15 of SigCgt in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc to know when the handler is set")
def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "primaldual.cli", "compare", "--preset", "paper", "--seed", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    # Wait (however loaded the machine) until the command has set its handler: before that, SIGTERM's
    # default action would kill the interpreter while it is still importing. The paper preset runs minutes.
    deadline = time.monotonic() + 120
    while not _handles_sigterm(process.pid) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    # One line, whether the signal came while the parser was being built or inside the command.
    assert err in ("primaldual compare: terminated (SIGTERM)\n", "primaldual: terminated (SIGTERM)\n")


def test_the_sigterm_handler_is_restored_after_an_in_process_call(capsys):
    before = signal.getsignal(signal.SIGTERM)
    assert main(["schedulers"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("command, choices", [("lbbsp", ["simulate", "aggregate"]), ("bench", ["offline", "oasis"])])
def test_a_command_without_its_subcommand_is_a_usage_error(capsys, command, choices):
    assert main([command]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"usage: primaldual {command} ")
    assert all(choice in captured.err for choice in choices)


def test_no_command_prints_the_help_on_stderr_and_exits_2(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "COMMAND" in captured.err


# ------------------------------------------------------------------------------------------ schedulers


def test_schedulers_json_lists_every_parameter_with_its_default(capsys):
    assert main(["schedulers", "--json"]) == 0
    listed = {info["name"]: info for info in json.loads(capsys.readouterr().out)["schedulers"]}
    assert list(listed) == available_schedulers() + list(GAVEL_POLICIES)  # Gavel's: by name, listed too
    for name, info in listed.items():
        assert info["doc"], name
        cls = scheduler_class(name)
        if cls.__init__ is object.__init__:
            assert info["parameters"] == []
            continue
        signature = list(inspect.signature(cls.__init__).parameters.values())[1:]
        assert [p["name"] for p in info["parameters"]] == [p.name for p in signature]
        for p, expected in zip(info["parameters"], signature):
            if isinstance(expected.default, (int, float, str, bool, type(None))):
                assert p["default"] == expected.default
    for name in ("oasis", "fifo", "drf", "rrh", "dorm", "oasis-lr", "oasis-p"):  # the built-ins say it all
        assert all(p["valid"] and p["meaning"] and p["type"] for p in listed[name]["parameters"]), name
    fifo = {p["name"]: p for p in listed["fifo"]["parameters"]}
    assert fifo["placement"]["default"] == "first_fit" and "least_loaded" in fifo["placement"]["doc"]


def test_schedulers_text_names_each_scheduler_and_parameter(capsys):
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    for name in available_schedulers():
        assert f"\n{name}: " in "\n" + out
    assert "    rrh.discount_rate (float, default 0.02; valid: a number >= 0 (per slot))\n        how fast" in out
    assert "--param NAME.KEY=VALUE" in out.splitlines()[0]
    assert "greedy: " in out and "(no parameters)" in out


def test_an_unknown_parameter_names_the_known_ones():
    with pytest.raises(InputError) as error:
        make_scheduler("fifo", wrokers=2)
    assert str(error.value) == ("scheduler fifo: unknown parameter wrokers; it takes workers, placement, "
                                "skip_unfinishable (see 'primaldual schedulers')")
    with pytest.raises(InputError, match="scheduler greedy: unknown parameter x; it takes no parameters"):
        make_scheduler("greedy", x=1)


def test_an_unknown_param_key_is_exit_2_from_run(capsys):
    assert main(["run", "--preset", "tiny", "--scheduler", "oasis", "--param", "price_scal=2"]) == 2
    err = capsys.readouterr().err
    assert "unknown parameter price_scal; it takes price_scale, eta, constants" in err
    assert "unexpected keyword" not in err


# ------------------------------------------------------------------------------------ pristine machine


def test_ci_runs_the_readme_commands_without_upgrading_anything():
    script = (ROOT / ".ci" / "run").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert "python3 -m venv .venv" in commands
    assert "pip install -e '.[dev]'" in commands
    assert "pytest" in commands and "pytest -m slow" in commands  # both tiers
    assert not [c for c in commands if "--upgrade" in c or " -U " in c], "CI must not upgrade pip/setuptools/wheel"
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e '.[dev]'" in readme and "\npytest && pytest -m slow " in readme


def test_what_building_a_wheel_needs_is_a_declared_dependency():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = " ".join(config["project"]["optional-dependencies"]["dev"])
    assert "setuptools>=68" in dev and "wheel" in dev
    assert "--durations=10" in config["tool"]["pytest"]["ini_options"]["addopts"]


def test_warnings_filter_hides_only_numpy_floating_point_noise():
    import re

    from primaldual.cli import NUMPY_NOISE

    for message in ("divide by zero encountered in divide", "invalid value encountered in multiply",
                    "overflow encountered in exp", "Mean of empty slice"):
        assert re.match(NUMPY_NOISE, message)
    assert not re.match(NUMPY_NOISE, "a scheduler's own RuntimeWarning")


def test_numpy_runtime_warnings_do_not_reach_the_user(monkeypatch):
    import warnings

    import numpy as np

    import primaldual.commands.schedulers as command

    def noisy(args):
        np.float64(1.0) / np.float64(0.0)  # "divide by zero encountered": a RuntimeWarning
        warnings.warn("a warning of the package's own", UserWarning)
        return 0

    monkeypatch.setattr(command, "run", noisy)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert main(["schedulers"]) == 0
    assert [str(w.message) for w in shown] == ["a warning of the package's own"]


def test_a_child_ends_on_sigterm_whatever_its_parent_installed():
    code = ("import signal\n"
            "from primaldual.backends.processes import exit_with_parent, terminate_like_interrupt\n"
            "terminate_like_interrupt()\n"
            "exit_with_parent()\n"
            "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.parametrize("install, returncode, after", [("", -signal.SIGTERM, ""),
                                                         ("terminate_like_interrupt()\n", 1, "Terminated")])
def test_a_sigterm_while_a_child_starts_acts_after_the_start(install, returncode, after):
    """``sigterm_held``: the code inside the block runs to its end, then the signal does what it would have
    done (the default exit, or the handler installed before); a pool worker killed mid-start would otherwise
    leave its spawned child an EOFError traceback on the command's stderr."""
    code = ("import os, signal\n"
            "from primaldual.backends.processes import sigterm_held, terminate_like_interrupt\n"
            f"{install}"
            "with sigterm_held():\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    print('started', flush=True)\n"
            "print('not reached', flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "started\n", done.stderr
    assert done.returncode == returncode and after in done.stderr

