"""``primaldual bench sigterm``: flags and output of :mod:`primaldual.sweep.sigterm`."""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json

NAME = "sigterm"
HELP = "SIGTERM 'primaldual ratio' at random delays: every kill must end with 143, <= 1 stderr line, no orphan"


def add_arguments(parser) -> None:
    parser.add_argument("--kills", type=int, default=40, help="how many runs to kill (default: 40)")
    parser.add_argument("--instances", type=int, default=40, help="--instances of each ratio run (default: 40)")
    parser.add_argument("--min-delay", type=float, default=0.5, help="shortest delay, seconds (default: 0.5)")
    parser.add_argument("--max-delay", type=float, default=6.0, help="longest delay, seconds (default: 6)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the delays (default: 0)")
    add_json_flag(parser)


def run(args) -> int:
    from primaldual.sweep.sigterm import format_sigterm_bench, run_kills

    if args.min_delay > args.max_delay:
        from primaldual.core.errors import InputError

        raise InputError(f"--min-delay: {args.min_delay:g} is more than --max-delay {args.max_delay:g}")
    result = run_kills(args.kills, args.instances, args.min_delay, args.max_delay, args.seed)
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_sigterm_bench(result))
    return 0 if not result.failures else 1
