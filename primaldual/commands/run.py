"""``primaldual run``: one online scheduler on one instance, through the simulator."""

from __future__ import annotations

import sys

from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._replan import replan_note
from primaldual.commands._progress import activity, add_progress_flag, progress_enabled
from primaldual.evaluation.compare import describe
from primaldual.commands._gpu_types import HELP as GPU_TYPES_HELP, gpu_types
from primaldual.core.errors import InputError
from primaldual.core.numerals import echo
from primaldual.core.files import load_instance, save_schedule
from primaldual.core.generate import PRESETS, generate
from primaldual.evaluation.restart_bound import applies
from primaldual.simulation.scheduler import available_schedulers, make_scheduler
from primaldual.core.jsonable import jsonable
from primaldual.core.plural import counted
from primaldual.core.provenance import provenance
from primaldual.simulation.scheduler import parse_value
from primaldual.simulation.rules import SimulationError
from primaldual.simulation.simulator import check_restart_cost, simulate

ORDER = 40


# ------------------------------------------------------------------------------ shared with ``compare``


def add_instance_arguments(parser) -> None:
    """``INSTANCE`` or ``--preset P [--seed S] [--jobs N]``: a file, or an instance generated on the fly."""
    parser.add_argument("instance", nargs="?", help="instance JSON file (or use --preset)")
    parser.add_argument("--preset", help=f"generate the instance instead: one of {', '.join(PRESETS)}")
    parser.add_argument("--seed", type=int, help="generator seed with --preset (default: 0)")
    parser.add_argument("--jobs", type=int, help="number of jobs with --preset (default: the preset's)")
    parser.add_argument("--gpu-types", help=f"with --preset: {GPU_TYPES_HELP}")


def instance_from_args(args):
    """The instance named by the arguments of :func:`add_instance_arguments`, and a short description."""
    if args.instance and args.preset:
        raise InputError("INSTANCE: give an instance file or --preset, not both")
    if args.instance:
        if args.seed is not None or args.jobs is not None:
            raise InputError("--seed/--jobs: only apply with --preset (the instance file fixes them)")
        if args.gpu_types is not None:
            raise InputError("--gpu-types: only applies with --preset (the instance file fixes the cluster)")
        return load_instance(args.instance), args.instance
    if not args.preset:
        if args.seed is not None or args.jobs is not None:
            raise InputError("--seed/--jobs: need --preset, e.g. --preset small --seed 3")
        if args.gpu_types is not None:
            raise InputError("--gpu-types: needs --preset, e.g. --preset small --gpu-types v100:2,k80:2")
        raise InputError("INSTANCE: give an instance file, or generate one with e.g. --preset small --seed 0")
    seed = 0 if args.seed is None else args.seed
    types = gpu_types(args.gpu_types)
    instance = generate(preset=args.preset, seed=seed, jobs=args.jobs, gpu_types=types)
    typed = f", gpu types {args.gpu_types}" if types else ""
    return instance, f"preset {args.preset}, seed {seed}" + (f", {counted(args.jobs, 'job')}" if args.jobs else "") + typed


def parse_parameter(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` as the key and its value; spaces around the key or the value are refused, as in a list
    flag (``' threshold=1'`` was taken as ``threshold``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise InputError(f"--param: must look like key=value, got {echo(text)}")
    for part in (key, value):
        if part != part.strip():
            raise InputError(f"--param: {echo(part)} has spaces around it in {echo(text)}; write KEY=VALUE "
                             "without spaces")
    return key, parse_value(value)


def parse_parameters(texts: list[str]) -> dict[str, object]:
    """``--param KEY=VALUE`` flags as a dict; a key given twice is refused naming it, as JSON and TOML inputs
    refuse a duplicate key (keeping the last value without a word hid a typo in the first, issue 53)."""
    out: dict[str, object] = {}
    for text in texts:
        key, value = parse_parameter(text)
        if key in out:
            raise InputError(f"--param: {key} given twice ({key}={out[key]!r} and {text!r}); give it once")
        out[key] = value
    return out


# ------------------------------------------------------------------------------------------ the command


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one online scheduler (oasis, greedy, fifo, drf, rrh, dorm, or a registered one)",
        description=(
            "Simulate one online scheduler slot by slot on an instance. The simulator refuses any allocation "
            "that breaks a constraint; the schedule it writes holds the completed jobs and passes "
            "'primaldual verify'. Exit 0 on success, 1 if the scheduler broke a rule, 2 on bad input."
        ),
        epilog="Schedulers: " + ", ".join(available_schedulers()),
    )
    add_instance_arguments(parser)
    parser.add_argument("--scheduler", required=True, help="scheduler name")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="scheduler parameter (repeatable), e.g. --param workers=2; values are JSON or strings")
    parser.add_argument("--restart-cost", type=float, default=0.0, metavar="F",
                        help="fraction of a slot's work a job loses in each slot where its placement changed "
                             "(a start or a resumption counts); in [0, 1), default 0 (free changes, the paper's "
                             "model); 0.01-0.1 of a 10-minute slot matches published restart overheads")
    parser.add_argument("-o", "--output", metavar="SCHEDULE", help="write the schedule (completed jobs) here")
    add_json_flag(parser)
    add_progress_flag(parser)
    parser.set_defaults(handler=run)


def _fmt(value, digits: int = 6) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def run(args) -> int:
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    instance, source = instance_from_args(args)
    parameters = parse_parameters(args.param)
    scheduler = make_scheduler(args.scheduler, **parameters)  # replan without the lookahead refused there
    if args.output:  # after every other input: a refused run creates no folder either
        check_output_path(args.output, "-o")
    note = replan_note(args.scheduler, scheduler, instance)
    if note:
        print(f"primaldual run: {note}", file=sys.stderr)
    try:
        with activity(f"run: {args.scheduler}", progress_enabled(args)):
            result = simulate(instance, scheduler, restart_cost=restart_cost)
    except SimulationError as error:
        if args.json:
            print_json({"scheduler": args.scheduler, "error": str(error), "rule": error.rule,
                        "slot": error.slot, "job": error.job, "equation": error.equation})
        else:
            print(f"primaldual run: {error}", flush=True)
        return 1
    if args.output:
        save_schedule(result.schedule, args.output, instance)
    metrics = result.metrics
    if args.json:
        out = {**result.to_dict(), "scheduler": args.scheduler, "instance": {"source": source, **describe(instance)},
               "output": args.output, "provenance": provenance()}
        if result.certificate is not None:
            out["certificate"] = jsonable(result.certificate.terms)
        print_json(out)
        return 0
    print(
        f"{args.scheduler} on {source}: utility {metrics.utility:.6g}; admitted {metrics.admitted}, completed "
        f"{metrics.completed} of {counted(instance.n_jobs, 'job')}; mean JCT {_fmt(metrics.mean_jct, 4)} slots; "
        f"scheduler runtime {result.scheduler_seconds:.3f} s"
    )
    if metrics.unfinished:
        print(f"{counted(metrics.abandoned, 'started job')} abandoned, never completed, not admitted "
              f"({metrics.wasted_worker_slots} worker-slots wasted)")
    if result.restart_cost > 0:
        bound = ("the optimum with one more worker-slot per job bounds this run from above, proofs/oasis-lr.md "
                 "Lemma R" if applies(result.restart_cost) else "the optimum without restart costs bounds this run")
        print(f"restart cost {result.restart_cost:g} slot: {metrics.restarts} restarts lost "
              f"{metrics.restart_lost_worker_slots:.4g} worker-slots ({bound})")
    if result.promises is not None:
        promises = result.promises
        print(f"promises: {promises.made} made, {promises.kept} kept, {promises.broken} broken")
    usage = "; ".join(
        f"{pool} " + ", ".join(f"{name} {value:.1%}" for name, value in values.items())
        for pool, values in metrics.utilisation.items() if values
    )
    print(f"mean utilisation: {usage}")
    if result.lookahead is not None:
        print(result.lookahead.describe())
    certificate = result.certificate
    if certificate is not None:
        print(
            f"certificate: dual bound D = {_fmt(certificate.dual_objective)}, best upper bound on OPT "
            f"{_fmt(certificate.best_upper_bound)}, OPT/ALG <= {_ratio(certificate.best_ratio_upper_bound)}"
        )
    if args.output:
        print(f"wrote {args.output}")
    return 0
