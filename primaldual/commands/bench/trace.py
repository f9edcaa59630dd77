"""``primaldual bench trace``: flags and output of :mod:`primaldual.evaluation.bench.trace`."""

from __future__ import annotations

import sys

from primaldual.commands._common import print_json
from primaldual.commands.bench import names
from primaldual.core.errors import InputError
from primaldual.evaluation.bench.trace import (CLUSTER_GPUS, DEFAULT_SCHEDULERS, GROWTH_VC, LARGEST, QUICK_TAIL,
                                               QUICK_VC, QUICK_WINDOW)

NAME = "trace"
HELP = ("every scheduler on whole Philly VCs: wall seconds and peak memory (a child's ru_maxrss), as ratios "
        "against RRH, and how each grows with jobs, slots and servers (measured exponents)")


def add_arguments(parser) -> None:
    add = parser.add_argument
    add("--seed", type=int, default=0, choices=(0, 1), help="trace seed (default 0)")
    add("--vcs", default=",".join(LARGEST), help=f"comma-separated VCs run whole (default the largest: {','.join(LARGEST)})")
    add("--growth-vc", default=GROWTH_VC, help=f"VC of the growth table (default {GROWTH_VC})")
    add("--schedulers", default=",".join(DEFAULT_SCHEDULERS),
        help="comma-separated schedulers (default every registered one but dorm)")
    add("--growth-schedulers", metavar="LIST",
        help="comma-separated schedulers of the growth table (default: --schedulers)")
    add("--cluster", action="store_true",
        help=f"also the whole cluster: all 15 VCs of the seed merged, {CLUSTER_GPUS} GPUs")
    add("--weeks", action="store_true",
        help="each VC's busiest week (168 h, as trace busiest finds it) instead of the whole VC")
    add("--timeout", type=float, default=900.0, help="seconds per child run (default 900)")
    add("--quick", action="store_true", help=f"hours {QUICK_WINDOW[0]:g}-{sum(QUICK_WINDOW):g} of {QUICK_VC} "
                                             f"(+{QUICK_TAIL:g} h to finish) instead of whole VCs")
    add("--json", action="store_true", help="print one JSON object instead of tables")


def _progress(instance, row) -> None:
    if row.error is None:  # progress of a long run
        print(f"bench trace: {instance.n_jobs} jobs x {instance.horizon} slots, {row.scheduler}: {row.seconds:.1f} s, "
              f"{row.peak_mib:.0f} MiB", file=sys.stderr, flush=True)


#: Fewest distinct sizes (above 0) a growth exponent is fitted on without a warning: two points always lie on
#: a line, so their slope measures nothing of how the run grows.
MIN_GROWTH_SIZES = 3


def _warn_few_sizes(growth: dict, vc: str) -> None:
    """One stderr line per dimension of the growth table fitted on too few sizes (a VC of 3 jobs gave the
    job sizes 0, 1, 2 and printed its exponents like any other)."""
    for dimension, table in growth.items():
        sizes = sorted({size for size in table.sizes if size > 0})
        if len(sizes) < MIN_GROWTH_SIZES:
            print(f"bench trace: warning: the {dimension} exponents are fitted on {len(sizes)} distinct sizes "
                  f"above 0 ({table.sizes}) of VC {vc}; they say little about growth (choose a larger --growth-vc)",
                  file=sys.stderr)


def run(args) -> int:
    from primaldual.evaluation.bench.trace import format_trace_bench, run_trace_bench
    from primaldual.simulation.scheduler import available_schedulers
    from primaldual.traces import packaged_vcs

    schedulers = names(args.schedulers, "--schedulers")
    growing = names(args.growth_schedulers, "--growth-schedulers") or schedulers
    vcs = names(args.vcs, "--vcs")
    for flag, given in (("--schedulers", schedulers), ("--growth-schedulers", growing)):
        unknown = [s for s in given if s not in available_schedulers()]
        if unknown:
            raise InputError(f"{flag}: unknown scheduler {', '.join(unknown)}; available: "
                             f"{', '.join(available_schedulers())}")
    if "rrh" not in schedulers:
        raise InputError(f"--schedulers: must include rrh (the reference of every ratio), got {args.schedulers!r}")
    for flag, given in (("--vcs", vcs), ("--growth-vc", [args.growth_vc])):
        missing = [v for v in given if v not in packaged_vcs(args.seed)]
        if missing:
            raise InputError(f"{flag}: not a packaged VC of seed {args.seed}: {', '.join(missing)} "
                             "(see 'primaldual trace list')")
    if not args.timeout > 0:
        raise InputError(f"--timeout: must be > 0 seconds, got {args.timeout!r}")
    if args.weeks and args.quick:
        raise InputError(f"--weeks: not with --quick, which runs one window of {QUICK_VC} instead of the VCs")
    result = run_trace_bench(args.seed, vcs, args.growth_vc, schedulers, growing, args.cluster, args.timeout,
                             args.quick, None if args.no_progress else _progress, weeks=args.weeks)
    _warn_few_sizes(result.growth, args.growth_vc)
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_trace_bench(result))
    return 0
