"""The type and finite range of every flag and argument of every command (docs/input-ranges.md, "Flags").

:data:`FLAGS` maps each command path (``"solve"``, ``"trace import"``, ``"lbbsp replay"``) to each of its
options (by their long name) and positional arguments (by their metavar-style name ``INSTANCE``): a numeric
:class:`~primaldual.core.ranges.FlagRange`, a :class:`~primaldual.core.ranges.Choice` argparse also checks, a
:class:`~primaldual.core.ranges.Text` whose meaning a later parser checks (bounded in length), an input file
(:data:`INPUT`) or output path (:data:`OUTPUT`), a switch, or a scheduler parameter (:data:`PARAM`, whose value is
checked against :mod:`primaldual.simulation.parameter_ranges`). The LB-BSP commands' table lives with them
(:data:`primaldual.lbbsp.flags.FLAGS`) and is merged in here.

:func:`check_command_flags` runs in :func:`primaldual.cli.main` right after parsing, before any handler reads,
generates or allocates anything: the first value outside its range is exit 2 with one line naming the flag, the
range and the value. ``tests/hardening/test_flag_ranges.py`` enumerates every command's flags from the argparse
parsers, so a flag cannot be added without an entry here. Cost O(flags).
"""

from __future__ import annotations

import argparse

from primaldual.commands._lists import comma_list
from primaldual.core.domains import MAX_HORIZON, MAX_JOBS, MAX_SERVERS
from primaldual.core.errors import InputError
from primaldual.core.output import refuse_writing_an_input
from primaldual.core.paths import EITHER, FILE, FOLDER, check_path
from primaldual.core.ranges import MAX_PATH, SEED, Choice, PathText, Text, integer, number, problem
from primaldual.lbbsp import flags as lbbsp_flags
from primaldual.offline.options import METHODS

SWITCH = "switch"
INPUT = PathText("a file path", MAX_PATH)
OUTPUT = PathText("an output path", MAX_PATH)
#: ``reproduce --out``: the folder of its reports.
OUTPUT_FOLDER = PathText("an output folder", MAX_PATH)
#: ``plot --out``: the folder of a results file's figures, or the one figure of ``plot schedule``.
FIGURES = PathText("an output folder or figure file", MAX_PATH)
#: The LB-BSP commands' trace argument: a file (an input, never to be written over) or a packaged name.
TRACE_INPUT = PathText("a trace file or packaged name", MAX_PATH)
#: ``--param``: each ``KEY=VALUE`` at most this long (a JSON value is also depth-limited before parsing).
PARAM = Text("KEY=VALUE", 10_000)
NAMES = Text("comma-separated names")
NAME = Text("a name", 200)
#: ``--gpu-types``: read by primaldual/commands/_gpu_types.py.
GPU_TYPES = Text("TYPE:SERVERS,...", 1000)

#: Seconds of a time limit: up to ~11.6 days (a finite wait on any run this package makes).
SECONDS = number(0, 1e6, low_open=True)
#: Solver or worker processes, threads: more than the cores of any machine is meaningless.
PROCESSES = integer(1, 1024)
#: The fraction of a slot's work a job loses per placement change, [0, 1) (primaldual.simulation).
RESTART_COST = number(0, 1, high_open=True)
GAP = number(0, 1, high_open=True)
INSTANCE_SOURCE = {"INSTANCE": INPUT, "--preset": NAME, "--seed": SEED, "--jobs": integer(1, MAX_JOBS),
                   "--gpu-types": GPU_TYPES}
SOLVE_FLAGS = {"--time-limit": SECONDS, "--solver": NAME, "--gap": GAP, "--threads": PROCESSES,
               "--method": Choice(METHODS)}

FLAGS: dict[str, dict[str, object]] = {
    "generate": {"--preset": NAME, "--jobs": integer(1, MAX_JOBS), "--seed": SEED,
                 "--horizon": integer(1, MAX_HORIZON), "--load": number(0, 1e5, low_open=True),
                 "--worker-servers": integer(1, MAX_SERVERS), "--ps-servers": integer(1, MAX_SERVERS),
                 "--capacity-scale": number(0, 1e6, low_open=True), "--output": OUTPUT, "--json": SWITCH,
                 "--gpu-types": GPU_TYPES},
    "trace import": {"--no-progress": SWITCH, "SOURCE": INPUT, "--format": Choice(("gavel", "csv")),
                     "--slot-hours": number(0.001, 10_000), "--window": Text("START_HOUR:HOURS", 100),
                     "--tail-hours": number(0, 1e6), "--gpus": integer(1, MAX_SERVERS * 8),
                     "--ps-servers": integer(1, MAX_SERVERS), "--target-load": number(0.01, 100),
                     "--utility": Text("RULE[:key=value,...]", 1000), "--scaling-efficiency": number(0.01, 1),
                     "--outlasting": Choice(("drop", "keep")), "--oversize": Choice(("cap", "drop")),
                     "--seed": SEED, "--output": OUTPUT, "--json": SWITCH, "--gpu-types": GPU_TYPES},
    "trace list": {"--json": SWITCH},
    "verify": {"INSTANCE": INPUT, "SCHEDULE": INPUT, "--json": SWITCH},
    "solve": {"--no-progress": SWITCH, "--restart-cost": RESTART_COST, "INSTANCE": INPUT, **SOLVE_FLAGS, "--builder": Choice(("auto", "pyomo", "matrix")),
              "--memory-limit": number(0.0625, 1e5), "--formulation": Choice(("strong", "weak")),
              "--relax": SWITCH, "--pooled": SWITCH, "--start": INPUT, "--output": OUTPUT, "--write-mps": OUTPUT,
              "--list-solvers": SWITCH, "--json": SWITCH},
    "schedulers": {"--json": SWITCH},
    "run": {"--no-progress": SWITCH, **INSTANCE_SOURCE, "--scheduler": NAME, "--param": PARAM, "--restart-cost": RESTART_COST,
            "--output": OUTPUT, "--json": SWITCH},
    "compare": {"--no-progress": SWITCH, **INSTANCE_SOURCE, "--schedulers": NAMES, "--param": PARAM, "--opt": SWITCH, **SOLVE_FLAGS,
                "--restart-cost": RESTART_COST, "--json": SWITCH},
    "ratio": {"--config": INPUT, "--preset": NAME, "--instances": integer(1, 100_000), "--seed": SEED,
              "--jobs": integer(1, MAX_JOBS), "--gpu-types": GPU_TYPES, "--schedulers": NAMES, "--param": PARAM,
              **SOLVE_FLAGS,
              "--restart-cost": RESTART_COST, "--no-opt": SWITCH, "--executor": Choice(("local", "dask")),
              "--address": NAME, "--workers": PROCESSES, "--out": OUTPUT, "--no-progress": SWITCH,
              "--json": SWITCH},
    "plot": {"--no-progress": SWITCH, "--from-csv": INPUT, "PATHS": INPUT, "--out": FIGURES, "--max-rows": integer(1, 10_000), "--json": SWITCH},
    "reproduce": {"--config": INPUT, "--quick": SWITCH, "--out": OUTPUT_FOLDER, "--restart-cost": RESTART_COST,
                  "--sections": NAMES,
                  "--executor": Choice(("local", "dask")), "--address": NAME, "--workers": PROCESSES,
                  "--no-progress": SWITCH, "--json": SWITCH},
    "bench oasis": {"--no-progress": SWITCH, "--seed": SEED, "--quick": SWITCH, "--jobs": integer(1, 10_000), "--quality": SWITCH,
                    "--compare-lr": SWITCH, "--seeds": NAMES, "--preset": Choice(("paper", "small")),
                    "--repetitions": integer(1, 1000), "--restart-cost": RESTART_COST, "--sets": NAMES,
                    "--first-seed": SEED, "--count": integer(1, 10_000), "--paper-count": integer(1, 1000),
                    "--restart-costs": NAMES, "--time-limit": SECONDS, "--json": SWITCH},
    "bench offline": {"--no-progress": SWITCH, "--against-raw": SWITCH, "--seeds": NAMES, "--budget": SECONDS, "--quick": SWITCH, "--sizes": NAMES, "--seed": SEED, "--solver": NAME,
                      "--json": SWITCH},
    "bench sigterm": {"--no-progress": SWITCH, "--kills": integer(1, 1000), "--instances": integer(1, 100_000),
                      "--min-delay": number(0, 600), "--max-delay": number(0, 600), "--seed": SEED,
                      "--json": SWITCH},
    "bench solvers": {"--budget": SECONDS, "--seeds": NAMES, "--sizes": NAMES, "--restart-cost": RESTART_COST,
                      "--only": Choice(("solvers", "restart")), "--json": SWITCH, "--no-progress": SWITCH},
    "bench trace": {"--seed": integer(0, 1), "--vcs": NAMES, "--growth-vc": NAME, "--schedulers": NAMES,
                    "--growth-schedulers": NAMES, "--cluster": SWITCH, "--weeks": SWITCH, "--timeout": SECONDS,
                    "--quick": SWITCH, "--json": SWITCH, "--no-progress": SWITCH},
    "trace busiest": {"SOURCE": INPUT, "--format": Choice(("gavel", "csv")), "--hours": number(0, 1e6, low_open=True),
                      "--step-hours": number(0, 1e6, low_open=True), "--seed": SEED, "--json": SWITCH},
    **{f"lbbsp {name}": table for name, table in lbbsp_flags.FLAGS.items() if name != "bench lbbsp"},
    "bench lbbsp": lbbsp_flags.FLAGS["bench lbbsp"],
}


#: What each path kind may name (primaldual.core.paths): read or written, a file, a folder or either.
PATH_RULES = {INPUT: (False, FILE), TRACE_INPUT: (False, FILE), OUTPUT: (True, FILE),
              OUTPUT_FOLDER: (True, FOLDER), FIGURES: (True, EITHER)}

#: The LB-BSP table's text kinds (their meaning checked by its handlers), bounded in length here.
_LBBSP_TEXT = {lbbsp_flags.TRACE: TRACE_INPUT, lbbsp_flags.PATH: OUTPUT,
               lbbsp_flags.SPAN: Text("an A-B range", 100)}


def command_path(parser: argparse.ArgumentParser, args) -> tuple[str, argparse.ArgumentParser]:
    """The chosen command's path (``"trace import"``) and its parser, following the subparser choices."""
    words = []
    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, action.dest, None) if action is not None else None
        if chosen is None:
            return " ".join(words), parser
        words.append(chosen)
        parser = action.choices[chosen]


def flag_name(action: argparse.Action) -> str:
    """The table's name of an option (its long form) or positional argument (its dest in capitals)."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return action.dest.upper()


def check_command_flags(parser: argparse.ArgumentParser, args) -> None:
    """Refuse the first flag of the chosen command outside its range (see the module docstring)."""
    check_parsed(*command_path(parser, args), args)


def kind_of(entry):
    """The kind an entry checks (the LB-BSP table's words, ``"trace"``, as this table's text kinds)."""
    return _LBBSP_TEXT.get(entry, entry) if isinstance(entry, str) else entry


def check_parsed(path: str, command: argparse.ArgumentParser, args) -> None:
    """The check of :func:`check_command_flags` on command ``path`` (also after an experiment file has set
    flags: ``ratio --config``)."""
    table = FLAGS.get(path)
    if table is None:
        return
    paths: dict[str, list[tuple[str, str]]] = {"input": [], "output": []}
    for action in command._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = flag_name(action)
        kind = kind_of(table.get(name))
        value = getattr(args, action.dest, None)
        if value is None or kind is None or isinstance(kind, str):
            continue  # switches, and choices argparse has checked
        for item in value if isinstance(value, list) else [value]:
            found = problem(name, kind, item)
            if found:
                raise InputError(found)
            if kind == NAMES:
                comma_list(item, name)
            if kind in PATH_RULES:
                write, expect = PATH_RULES[kind]
                check_path(item, name, write=write, expect=expect, mismatch=False)  # the writer names -o
                paths["output" if write else "input"].append((name, item))
    refuse_writing_an_input(paths["output"], paths["input"])
