"""The offline solve's flags (``--time-limit``, ``--solver``, ``--gap``, ``--threads``, ``--method``, and
``--restart-cost``), shared by ``compare`` and ``ratio``, and the :class:`SolveOptions` they give."""

from __future__ import annotations

from primaldual.offline.options import METHODS, SolveOptions


def add_solve_arguments(parser, *, restart_cost: bool = True) -> None:
    """The flags of :class:`SolveOptions` (and ``--restart-cost``), shared by ``compare`` and ``ratio``."""
    parser.add_argument("--time-limit", type=float, metavar="S", default=60.0,
                        help="time limit of the offline solve in seconds (default: 60)")
    parser.add_argument("--solver", default="highs", help="backend of the offline solve (default: highs)")
    parser.add_argument("--gap", type=float, metavar="G", help="relative MIP gap in [0, 1) (default: exact)")
    parser.add_argument("--threads", type=int, metavar="N", default=1, help="solver threads (default: 1)")
    parser.add_argument("--method", default="auto", choices=METHODS,
                        help="offline method: the ILP, its LP relaxation, the pooled relaxation, column "
                             "generation, or auto: the ILP where it is expected to finish, column generation "
                             "above (primaldual.offline.solve.AUTO_ILP_PLACEMENTS; default: auto)")
    if restart_cost:
        parser.add_argument("--restart-cost", type=float, metavar="F", default=0.0,
                            help="fraction of a slot's work a job loses in each slot where its placement "
                                 "changed (a start or a resumption counts); in [0, 1), default 0 (the paper's "
                                 "model); OPT is then bounded by the start-cost relaxation (one more "
                                 "worker-slot per job)")


def solve_options_from_args(args) -> SolveOptions:
    """The validated :class:`SolveOptions` of the flags added by :func:`add_solve_arguments`."""
    return SolveOptions(solver=args.solver, time_limit=args.time_limit, mip_gap=args.gap, threads=args.threads,
                        method=args.method)


__all__ = ["add_solve_arguments", "solve_options_from_args"]
