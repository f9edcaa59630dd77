"""``primaldual lbbsp sweep``: replay a family of generated traces (:mod:`primaldual.lbbsp.sweep`).

Kept apart from :mod:`primaldual.commands.lbbsp`, which registers it, to keep both modules short.
"""

from __future__ import annotations

from primaldual.commands._common import print_json
from primaldual.core.errors import InputError
from primaldual.lbbsp.flags import MAX_REPLAY_CELLS, MAX_SWEEP_TRACES, check_flags, check_product

# Caps of one generated trace (primaldual/lbbsp/flags.py; also their product, MAX_REPLAY_CELLS).
MAX_WORKERS, MAX_ITERATIONS = 1000, 100_000


def register_sweep(commands, subcommand) -> None:
    """Add ``sweep`` to the ``lbbsp`` subcommands; ``subcommand`` is the ``--json`` parser factory."""
    from primaldual.lbbsp.sweep import SWEEP_KINDS

    sweep = subcommand(commands, _sweep, "sweep",
                       help="replay a family of generated traces: shares of the oracle's gain",
        description="Generate each trace of a family (as 'lbbsp generate' does), replay it with select and report "
                    "speedup, oracle speedup, share of the oracle's gain, the hindsight references and how many "
                    "traces reach half the oracle's gain (docs/lbbsp-traces.md).")
    sweep.add_argument("--kind", choices=SWEEP_KINDS, required=True, help="family of traces")
    sweep.add_argument("--seeds", required=True, help="seeds A-B (inclusive) or one seed A")
    sweep.add_argument("--base", default="pai:job_1", help="trace amplified by --kind amplified (default pai:job_1)")
    sweep.add_argument("--factor", type=float, default=3.0, help="amplification factor (amplified; default 3)")
    sweep.add_argument("--cov-jobs", default="50-99", help="CoV-table rows A-B (--kind cov; default 50-99)")
    sweep.add_argument("--workers", type=int, default=10,
                       help=f"workers of a generated kind or cov, 2..{MAX_WORKERS} (default 10)")
    sweep.add_argument("--iterations", type=int, default=300,
                       help=f"iterations of a generated kind, 2..{MAX_ITERATIONS}; for cov, the first N of each row "
                            "(default 300)")
    sweep.add_argument("--global-batch", type=int, default=None, help="global batch X (default 64 per worker)")
    sweep.add_argument("--law-aware-samples", type=int, default=0,
                       help="cov only: add the law-aware reference with S draws per iteration (default 0: off)")
    sweep.add_argument("--sample-seed", type=int, default=0, help="seed of the law-aware draws (default 0)")
    sweep.add_argument("--law-aware-target", choices=("known", "last"), default="known",
                       help="the law-aware rule knows the row's coming CoV (known, default: an upper reference, "
                            "not causal) or assumes the last measured one (last: causal)")


def _range(flag: str, text: str, low: int, high: int) -> range:
    first, _, last = text.partition("-")
    try:
        first, last = int(first), int(last or first)
    except ValueError:
        raise InputError(f"{flag}: must be A-B or A with integers, got {text!r}") from None
    if not low <= first <= last <= high:
        raise InputError(f"{flag}: need {low} <= A <= B <= {high}, got {text!r}")
    return range(first, last + 1)


def _sweep(args) -> int:
    from primaldual.commands._progress import progress_bar
    from primaldual.lbbsp.sweep import sweep

    check_flags("sweep", args)
    seeds = _range("--seeds", args.seeds, 0, 2 ** 32 - 1)
    jobs = _range("--cov-jobs", args.cov_jobs, 0, 99)
    traces = len(seeds) * (len(jobs) if args.kind == "cov" else 1)
    check_product("traces (--seeds x --cov-jobs)", traces, MAX_SWEEP_TRACES, "one replay each")
    if args.kind != "amplified":  # an amplified trace has its base's size, checked when it is loaded
        cells = args.workers * (min(args.iterations, 2000) if args.kind == "cov" else args.iterations)
        check_product("--workers x --iterations", cells, MAX_REPLAY_CELLS, "the cells a replay handles")
    if args.law_aware_samples and args.kind != "cov":
        raise InputError(f"--law-aware-samples: only with --kind cov, got --kind {args.kind}")
    with progress_bar("lbbsp sweep", unit="trace", enabled=not args.no_progress) as progress:
        result = sweep(args.kind, seeds, args.base, args.factor, jobs, args.workers, args.iterations,
                       args.global_batch, args.law_aware_samples, args.sample_seed, args.law_aware_target == "known",
                       progress=progress(traces))
    if args.json:
        print_json(result)
        return 0
    references = [key for key in ("best_bank_member", "best_static_split", "law_aware") if key in result["summary"]]
    print(f"{result['traces']} {args.kind} traces, {result['lbbsp_method']}, X = {result['global_batch']}")
    print(f"{'trace':<28}{'speedup':>9}{'oracle':>9}{'share':>8}" + "".join(f"{key:>19}" for key in references))
    for row in result["per_trace"]:
        name = f"{row['trace']}" + (f" s{row['seed']}" if "job" in row else "")
        print(f"{name:<28}{row['speedup']:>8.3f}x{row['oracle_speedup']:>8.3f}x{_cell(row['share']):>8}"
              + "".join(f"{_cell(row[key]['share']):>19}" for key in references))
    for key, figure in result["summary"].items():
        tail = f", reaching 0.5: {figure['reaching_half']}" if "reaching_half" in figure else ""
        print(f"{key}: min {figure['min']:.3f}, median {figure['median']:.3f}, max {figure['max']:.3f}{tail}")
    return 0


def _cell(value) -> str:
    return "-" if value is None else f"{value:.3f}"
