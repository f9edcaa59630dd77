"""``primaldual ratio``: a resumable sweep of empirical competitive ratios OPT/ALG, locally or on Dask.

Every setting is a flag, or a key of an experiment file (``--config FILE.toml``, :mod:`primaldual.commands._config`);
the resolved settings are written beside the results (``OUT.config.toml``) so that the run can be repeated.
"""

from __future__ import annotations

import sys
from pathlib import Path

from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._progress import progress_enabled
from primaldual.commands._gpu_types import HELP as GPU_TYPES_HELP, gpu_types
from primaldual.core.errors import InputError
from primaldual.core.generate import PRESETS
from primaldual.commands._solve_flags import add_solve_arguments, solve_options_from_args
from primaldual.simulation.simulator import check_restart_cost

ORDER = 60


def add_executor_arguments(parser) -> None:
    parser.add_argument(
        "--executor", choices=("local", "dask"), default="local",
        help="local: spawned processes on this machine (default); dask: a Dask distributed cluster",
    )
    parser.add_argument(
        "--address", help="Dask scheduler address, e.g. tcp://scheduler-host:8786 (default with --executor dask: "
        "start a local Dask cluster of --workers processes)",
    )
    parser.add_argument(
        "--workers", dest="workers", type=int,
        help="worker processes for the local executor or a local Dask cluster (default: one per core)",
    )


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "ratio",
        help="sweep of competitive ratios OPT/ALG over seeded instances (resumable, local or Dask)",
        description=(
            "Generate --instances instances of --preset with seeds S, S+1, ..., run each scheduler, solve the "
            "offline optimum with a time limit (MIP-started from the best online schedule), and append one "
            "record per instance to --out (JSON Lines). Rerunning with the same flags skips finished "
            "instances. Prints per scheduler the mean and worst OPT/ALG and their certified intervals. "
            "--config FILE.toml gives the same settings as keys named like the flags."
        ),
        epilog="Exit codes: 0 done, 2 bad input (including a malformed results file, named with its line).",
    )
    parser.add_argument("--config", metavar="FILE.toml", help="experiment file: keys are this command's flags")
    parser.add_argument("--preset", default="small", help=f"one of {', '.join(PRESETS)} (default: small)")
    parser.add_argument("--instances", type=int, default=10, help="number of instances (default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default: 0)")
    parser.add_argument("--jobs", dest="instance_jobs", type=int,
                        help="jobs per instance, as in 'primaldual generate --jobs' (default: the preset's)")
    parser.add_argument("--gpu-types", help=f"every instance on a heterogeneous cluster: {GPU_TYPES_HELP}")
    parser.add_argument("--schedulers",  # the paper's six; sweep.spec.DEFAULT_SCHEDULERS (a test keeps them equal)
                        help="comma-separated scheduler names (default: oasis,greedy,fifo,drf,rrh,dorm)")
    parser.add_argument("--param", action="append", default=None, metavar="NAME.KEY=VALUE",
                        help="a scheduler's parameter (repeatable), e.g. --param fifo.workers=2")
    add_solve_arguments(parser)
    parser.add_argument("--no-opt", action="store_true", help="skip the offline ILP: bound OPT without a solver")
    add_executor_arguments(parser)
    parser.add_argument("--out", help="results file, JSON Lines (default: ratio-PRESET-seedS-nN.jsonl)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (it shows only when stderr is a terminal)")
    add_json_flag(parser)
    parser.set_defaults(handler=run, parser=parser)


def parse_schedulers(text: str | None):
    from primaldual.commands._lists import comma_list
    from primaldual.sweep import DEFAULT_SCHEDULERS

    if text is None:
        return tuple(DEFAULT_SCHEDULERS)
    return tuple(comma_list(text, "--schedulers"))


def run_sweep(specs, out, args):
    """Run ``specs`` with the executor the flags ask for; returns the :class:`SweepResult`."""
    from primaldual.sweep import dask_executor, sweep

    progress = progress_enabled(args)  # off with --no-progress and when stderr is not a terminal
    check_executor(args)
    if args.executor == "dask":
        with dask_executor(args.address, args.workers) as executor:
            return sweep(specs, out, executor=executor, progress=progress)
    return sweep(specs, out, workers=args.workers, progress=progress)


def check_executor(args) -> None:
    """``--workers`` and ``--address``, checked with the other settings before any file is created."""
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers: must be >= 1, got {args.workers}")
    if args.address and args.executor != "dask":
        raise InputError("--address: only meaningful with --executor dask")


def specs_from_args(args):
    """The sweep's specs, every setting validated before any work starts."""
    from primaldual.commands.compare import check_schedulers, scheduler_parameters
    from primaldual.sweep import ratio_specs

    schedulers = parse_schedulers(args.schedulers)
    solve = solve_options_from_args(args)
    every = scheduler_parameters(args.param or [], list(schedulers))
    check_schedulers(every)  # in this process: a worker would meet a bad value after the files were created
    check_executor(args)
    parameters = {name: values for name, values in every.items() if values}
    return ratio_specs(
        args.preset, args.instances, args.seed, schedulers, jobs=args.instance_jobs, opt=not args.no_opt,
        solver=solve.solver, time_limit=solve.time_limit, mip_gap=solve.mip_gap,
        threads=solve.threads, method=solve.method,
        restart_cost=check_restart_cost(args.restart_cost, "--restart-cost"), scheduler_params=parameters,
        gpu_types=None if gpu_types(args.gpu_types) is None else args.gpu_types,
    )


#: Settings that say how a sweep runs, not what its records hold: a rerun may change them.
RUN_ONLY = ("address", "executor", "no-progress", "workers")


def check_settings_file(out: Path, config: Path, settings: str) -> None:
    """Refuse (exit 2, nothing written) a results file ``out`` that cannot be read, or one holding records
    of other settings than ``settings``: rewriting ``config`` would leave those records undescribed."""
    import tomllib

    from primaldual.core.domains import show
    from primaldual.core.numerals import echo
    from primaldual.core.paths import check_path
    from primaldual.sweep import read_records

    check_path(config, "--out", write=True)  # a device or FIFO there is neither read nor replaced
    if not read_records(out) or not config.is_file():
        return  # no records yet, or none described: nothing to contradict
    try:
        before = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InputError(f"--out: {echo(str(config))} cannot be read ({error}); move it away to rerun into "
                         f"{echo(str(out))}") from None
    now = tomllib.loads(settings)
    changed = sorted(key for key in before.keys() | now.keys()
                     if key not in RUN_ONLY and before.get(key) != now.get(key))
    if changed:
        key = changed[0]
        raise InputError(f"--out: {echo(str(out))} holds records of other settings ({key}: {show(before.get(key))} "
                         f"there, {show(now.get(key))} now); give another --out, or repeat them with --config "
                         f"{echo(str(config))}")


def run(args) -> int:
    from primaldual.backends.processes import terminate_like_interrupt
    from primaldual.sweep import format_summary, summarize
    from primaldual.commands._flags import check_parsed
    from primaldual.core.output import write_text
    from primaldual.commands._config import apply_config, dump_config

    terminate_like_interrupt()  # SIGTERM stops the sweep like Ctrl-C: workers stopped, records kept
    args = apply_config(args, args.parser)
    check_parsed("ratio", args.parser, args)  # the experiment file's values have the flags' ranges
    specs = specs_from_args(args)
    out = check_output_path(args.out or f"ratio-{args.preset}-seed{args.seed}-n{args.instances}.jsonl", "--out")
    config = Path(f"{out}.config.toml")
    settings = dump_config(args, args.parser)
    check_settings_file(out, config, settings)  # every input accepted before the settings file is written
    write_text(config, settings, "--out")
    result = run_sweep(specs, out, args)
    summary = summarize(result.records)
    if args.json:
        from primaldual.core.jsonable import jsonable  # an infinite worst (ALG = 0 < OPT) becomes null

        print_json(jsonable({"out": str(out), "config": str(config), "computed": result.computed,
                             "skipped": result.skipped, **summary}))
    else:
        print(f"{out}: {result.computed} computed, {result.skipped} already there; settings in {config}")
        print(format_summary(summary))
    return 0
