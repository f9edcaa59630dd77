"""``primaldual bench offline``: flags and output of :mod:`primaldual.evaluation.bench.offline` and, with
``--against-raw``, of :mod:`primaldual.evaluation.bench.offline_raw`."""

from __future__ import annotations

from primaldual.commands._common import print_json
from primaldual.commands.bench import names, refuse_unused
from primaldual.commands._lists import comma_list
from primaldual.core.errors import InputError

NAME = "offline"
HELP = ("offline ILP: size, Pyomo build vs solver seconds, LP/ILP bound ratio of the weak and strong "
        "formulations, and the largest generated size solved to proven optimality within a budget")


def add_arguments(parser) -> None:
    from primaldual.evaluation.bench.offline import DEFAULT_BUDGET, QUICK_BUDGET, SIZES

    add = parser.add_argument
    add("--budget", type=float, metavar="S",
        help=f"time limit per solve in seconds (default {DEFAULT_BUDGET:g}; {QUICK_BUDGET:g} with --quick)")
    add("--quick", action="store_true", help="only the tiny and small presets")
    add("--sizes", metavar="LIST", help="comma-separated size labels to run, from: " + ", ".join(s[0] for s in SIZES))
    add("--seed", type=int, default=0, help="instance seed (default 0)")
    add("--solver", default="highs", help="backend (default highs)")
    add("--json", action="store_true", help="print one JSON object instead of a table")
    add("--against-raw", action="store_true",
        help="per instance, the package's solve (primaldual solve --time-limit BUDGET) against plain highspy on its "
             "--write-mps model, in the same run: seconds to reach each gap and the gap at fractions of the budget "
             "(default size J30-T24-S8, seeds 1-5, budget 30 s)")
    add("--seeds", metavar="LIST", help="with --against-raw: comma-separated instance seeds (default 1,2,3,4,5)")


def _seeds(text: str | None) -> list[int]:
    if text is None:
        return [1, 2, 3, 4, 5]
    try:
        seeds = [int(part) for part in comma_list(text, "--seeds")]
    except ValueError:
        raise InputError(f"--seeds: must be comma-separated integers, got {text!r}") from None
    return seeds


def _budget(args, default: float) -> float:
    budget = args.budget if args.budget is not None else default
    if not budget > 0:
        raise InputError(f"--budget: must be a number of seconds > 0, got {budget!r}")
    return budget


def _against_raw(args):
    from primaldual.evaluation.bench.offline import size_instance, size_labels
    from primaldual.evaluation.bench.offline_raw import against_raw, format_against_raw

    budget = _budget(args, 30.0)
    text = args.sizes or "J30-T24-S8"
    size_labels(text)  # refuses an unknown label; the run keeps the order given
    labels, seeds = comma_list(text, "--sizes"), _seeds(args.seeds)
    # The instance `generate --preset P --jobs J --horizon T --worker-servers S --ps-servers S --seed s`.
    instances = ((f"{label}/s{seed}", size_instance(label, seed, load=False)) for label in labels for seed in seeds)
    return against_raw(instances, budget, None if args.json else lambda row: print(
        f"  {row.instance.replace('/s', ' seed ')}: package {row.package.status}, raw {row.raw.status}",
        flush=True)), format_against_raw


def run(args) -> int:
    from primaldual.backends.solvers import check_solver
    from primaldual.evaluation.bench.offline import (DEFAULT_BUDGET, QUICK_BUDGET, format_offline_bench,
                                                      run_offline_bench, size_labels)

    mode = "--against-raw" if args.against_raw else "the size ladder"
    refuse_unused(args, {"--seeds": ("--against-raw",), "--quick": ("the size ladder",),
                         "--seed": ("the size ladder",), "--solver": ("the size ladder",)}, mode)
    names(args.sizes, "--sizes")  # an empty list is refused, not read as the long default ladder
    check_solver(args.solver)
    if args.against_raw:
        result, text = _against_raw(args)
    else:
        budget = _budget(args, QUICK_BUDGET if args.quick else DEFAULT_BUDGET)
        progress = None if args.json else lambda row: print(f"  {row.size}: {row.status} in "
                                                            f"{row.solve_seconds:.2f} s", flush=True)
        result = run_offline_bench(size_labels(args.sizes, args.quick), args.solver, budget, args.seed, progress)
        text = format_offline_bench
    if args.json:
        print_json(result.to_dict())
    else:
        print(text(result))
    return 0
