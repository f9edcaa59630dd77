"""``primaldual bench solvers``: flags and output of :mod:`primaldual.evaluation.bench.solvers`."""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.commands._lists import comma_list
from primaldual.core.errors import InputError

NAME = "solvers"
HELP = "HiGHS vs SCIP (pyscipopt) on the offline ILP by size, and the exact OPT with restart costs on small"


def add_arguments(parser) -> None:
    from primaldual.evaluation.bench.solvers import SIZES

    parser.add_argument("--budget", type=float, default=60.0, metavar="S", help="seconds per solve (default 60)")
    parser.add_argument("--seeds", default="1000,1001,1002", metavar="LIST",
                        help="instance seeds, comma-separated (default 1000,1001,1002)")
    parser.add_argument("--sizes", default=",".join(s[0] for s in SIZES[:3]), metavar="LIST",
                        help="size labels, from: " + ", ".join(s[0] for s in SIZES))
    parser.add_argument("--restart-cost", type=float, default=0.1, metavar="F",
                        help="restart cost of the restart table (default 0.1); 0 skips it")
    parser.add_argument("--only", choices=("solvers", "restart"), help="run one table only")
    add_json_flag(parser)


def run(args) -> int:
    from primaldual.evaluation.bench.solvers import SIZES, format_solvers_bench, run_solvers_bench

    try:
        seeds = [int(s) for s in comma_list(args.seeds, "--seeds")]
    except ValueError:
        raise InputError(f"--seeds: must be comma-separated integers, got {args.seeds!r}") from None
    labels = comma_list(args.sizes, "--sizes")
    unknown = [s for s in labels if s not in {name for name, *_ in SIZES}]
    if unknown or not seeds or not args.budget > 0:
        raise InputError(f"--sizes: unknown {unknown}" if unknown else "--seeds/--budget: need seeds and a budget > 0")
    if args.only == "restart" and not args.restart_cost:
        raise InputError("--restart-cost: 0 skips the restart table, and --only restart runs only that table: "
                         "nothing would run; give a cost in (0, 1)")
    result = run_solvers_bench(labels, seeds, args.budget, args.restart_cost, args.only)
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_solvers_bench(result))
    return 0
