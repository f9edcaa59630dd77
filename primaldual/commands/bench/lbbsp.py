"""``primaldual bench lbbsp``: LB-BSP and the oracle against BSP on the GPU and CPU scenarios."""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.lbbsp.bench import format_benchmark, run_benchmark

NAME = "lbbsp"
HELP = "mean iteration time of BSP, LB-BSP and the oracle (heterogeneous GPU, non-dedicated CPU), as speedups"


def add_arguments(parser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--quick", action="store_true", help="100 iterations per scenario instead of 300")
    add_json_flag(parser)


def run(args) -> int:
    from primaldual.lbbsp.flags import check_flags

    check_flags("bench lbbsp", args)
    result = run_benchmark(seed=args.seed, quick=args.quick)
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_benchmark(result))
    return 0
