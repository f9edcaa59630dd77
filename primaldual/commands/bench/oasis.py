"""``primaldual bench oasis``: flags and output of :mod:`primaldual.evaluation.bench.oasis_decisions`,
``--quality`` of :mod:`~primaldual.evaluation.bench.oasis_quality`, ``--compare-lr`` of
:mod:`~primaldual.evaluation.bench.oasis_lr_speed`."""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.commands.bench import refuse_unused
from primaldual.commands._lists import comma_list
from primaldual.core.errors import InputError

NAME = "oasis"
HELP = "OASiS per-job decision time on the paper preset, against the dual subroutine's plain-Python reference"


def add_arguments(parser) -> None:
    add = parser.add_argument
    add("--seed", type=int, default=0, help="instance seed (default 0)")
    add("--quick", action="store_true",
        help="60 jobs instead of 300, the reference on every 10th job (else every 3rd), a 50-job target run")
    add("--jobs", type=int, default=None, help="override the number of jobs of the paper run")
    add("--quality", action="store_true",
        help="utility of oasis, oasis-lr, oasis-p and the baselines on fresh seeds instead")
    add("--compare-lr", action="store_true",
        help="oasis-lr against oasis (and against itself without the lookahead) on --preset instances instead: "
             "median whole-run wall-time ratios (same process, rotating order) and oasis-lr's per-job decision time")
    add("--seeds", default="500,501,502", help="with --compare-lr: comma-separated seeds (default 500,501,502)")
    add("--preset", choices=("paper", "small"), default="paper",
        help="with --compare-lr: the instances' preset (default paper, where issue 10's runtime targets apply; "
             "small with --jobs 20 shows the lookahead's cost where it runs)")
    add("--repetitions", type=int, default=5,
        help="with --compare-lr: timed runs of each scheduler per instance (default 5)")
    add("--restart-cost", type=float, default=0.0, help="with --compare-lr: the simulator's restart cost (default 0)")
    add("--sets", default="tiny,small,small20",
        help="with --quality: comma-separated sets among tiny, small, small20, paper")
    add("--first-seed", type=int, default=100,
        help="with --quality: first seed (default 100, disjoint from the design seeds 0-19)")
    add("--count", type=int, default=16, help="with --quality: instances per set (default 16)")
    add("--paper-count", type=int, default=3, help="with --quality: paper instances (default 3)")
    add("--restart-costs", default="0,0.1", help="with --quality: comma-separated restart costs (default 0,0.1)")
    add("--time-limit", type=float, default=30.0, help="with --quality: seconds per offline optimum (default 30)")
    add_json_flag(parser)


#: The default benchmark's name in messages, and the flags each of the two others reads alone.
DECISIONS = "the decision benchmark"
QUALITY_FLAGS = ("--sets", "--first-seed", "--count", "--paper-count", "--restart-costs", "--time-limit")
COMPARE_LR_FLAGS = ("--seeds", "--preset", "--repetitions", "--restart-cost")


def _quality(args):
    from primaldual.evaluation.bench.oasis_quality import SETS, format_quality, run_quality
    from primaldual.simulation.simulator import check_restart_cost

    sets = comma_list(args.sets, "--sets")
    if any(s not in SETS for s in sets):
        raise InputError(f"--sets: must list sets among {', '.join(SETS)}, got {args.sets!r}")
    costs = []
    for n, text in enumerate(comma_list(args.restart_costs, "--restart-costs")):
        # Parse first, then the simulator's own rule (InputError is a ValueError: one try would swallow it).
        try:
            value = float(text)
        except ValueError:
            value = text.strip()  # not a number: check_restart_cost refuses it with the same message
        costs.append(check_restart_cost(value, f"--restart-costs entry {n + 1}"))
    for flag, value in (("--first-seed", args.first_seed), ("--count", args.count), ("--paper-count", args.paper_count)):
        if value < (0 if flag == "--first-seed" else 1):
            raise InputError(f"{flag}: must be {'>= 0' if flag == '--first-seed' else '>= 1'}, got {value}")
    return run_quality(sets, args.first_seed, args.count, costs, args.time_limit, args.paper_count), format_quality


def _compare_lr(args):
    from primaldual.evaluation.bench.oasis_lr_speed import compare_lr, format_compare_lr
    from primaldual.simulation.simulator import check_restart_cost

    try:
        seeds = [int(s) for s in comma_list(args.seeds, "--seeds")]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0:
        raise InputError(f"--seeds: must be comma-separated seeds >= 0, got {args.seeds!r}")
    if args.repetitions < 1:
        raise InputError(f"--repetitions: must be >= 1, got {args.repetitions}")
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    return compare_lr(seeds, args.repetitions, restart_cost, args.jobs, args.preset), format_compare_lr


def run(args) -> int:
    from primaldual.evaluation.bench.oasis_decisions import format_benchmark, run_benchmark

    if args.compare_lr and args.quality:
        raise InputError("--compare-lr: cannot be combined with --quality (two different benchmarks)")
    mode = "--compare-lr" if args.compare_lr else "--quality" if args.quality else DECISIONS
    refuse_unused(args, {**{flag: ("--quality",) for flag in QUALITY_FLAGS},
                         **{flag: ("--compare-lr",) for flag in COMPARE_LR_FLAGS},
                         "--seed": (DECISIONS,), "--quick": (DECISIONS,), "--jobs": (DECISIONS, "--compare-lr")}, mode)
    if args.compare_lr or args.quality:
        result, text = (_compare_lr if args.compare_lr else _quality)(args)
    else:
        result, text = run_benchmark(seed=args.seed, quick=args.quick, jobs=args.jobs), format_benchmark
    if args.json:
        print_json(result.to_dict())
    else:
        print(text(result))
    return 0
