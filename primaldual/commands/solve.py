"""``primaldual solve``: the offline optimum of an instance (or a bound on it), with an honest certificate."""

from __future__ import annotations


from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._progress import activity, add_progress_flag, progress_enabled
from primaldual.core.errors import InputError
from primaldual.core.files import load_instance, load_schedule, save_schedule
from primaldual.core.plural import counted
from primaldual.core.provenance import provenance
from primaldual.offline.child import DEFAULT_MEMORY_SHARE
from primaldual.offline.methods import METHOD_TABLE, has_one_model, is_relaxation
from primaldual.offline.options import AUTO, FORMULATIONS, LP, METHODS, POOLED, SolveOptions
from primaldual.backends.solvers import SOLVERS, WARMSTART_SOLVERS, solver_available, solver_version
from primaldual.offline.solver_choice import resolve_solver
from primaldual.simulation.simulator import check_restart_cost

ORDER = 30


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "solve",
        help="offline optimum (ILP of eqs. 1-13), its LP / pooled relaxation bound, or an MPS/LP export",
        description=(
            "Solve the offline utility-maximisation problem of an instance. The incumbent schedule is checked "
            "by the independent verifier; the bound is an upper bound on the optimum. Status 'optimal' means "
            "the bound meets the incumbent; a time- or gap-limited answer is 'feasible' with its gap. "
            "Exit 0 when a schedule (or relaxation bound) was found, 1 when the solver found nothing "
            "(infeasible, time limit without incumbent, killed, solver error), 2 on bad input."
        ),
    )
    parser.add_argument("instance", nargs="?", help="instance JSON file (not needed with --list-solvers)")
    parser.add_argument("--solver", default="highs", help=f"backend: one of {', '.join(SOLVERS)} (default: highs)")
    parser.add_argument("--method", default=None, metavar="{" + ",".join(METHODS) + "}",
                        help="ilp (the exact ILP), lp (its LP relaxation), pooled (servers merged), cg (column "
                             "generation + price-and-branch over the packing formulation (14)-(18): a verified "
                             "schedule and a certified bound at any size), auto (default: ilp where it is expected "
                             "to finish, cg otherwise)")
    parser.add_argument("--builder", default="auto", metavar="{auto,pyomo,matrix}",
                        help="who assembles the ILP/LP: the Pyomo model, numpy sparse arrays handed to highspy "
                             "(the strong per-server model only; much faster to build), or auto (default: the "
                             "matrix path on large models)")
    parser.add_argument("--time-limit", type=float, metavar="S",
                        help="wall-clock limit in seconds on the whole solve, building the model included "
                             "(default: none)")
    parser.add_argument("--memory-limit", type=float, metavar="GIB",
                        help="memory cap of the solver process in GiB (default with --time-limit: "
                             f"{DEFAULT_MEMORY_SHARE * 100:.0f}%% of this machine's memory)")
    parser.add_argument("--gap", type=float, metavar="G", help="relative MIP gap at which to stop (default: exact)")
    parser.add_argument("--threads", type=int, metavar="N", help="solver threads (default: the solver's)")
    parser.add_argument("--formulation", default="strong", choices=FORMULATIONS,
                        help="strong (default: adds valid cumulative-work and earliest-completion cuts) or weak")
    parser.add_argument("--relax", action="store_true", help="same as --method lp")
    parser.add_argument("--pooled", action="store_true", help="same as --method pooled")
    parser.add_argument("--start", metavar="SCHEDULE",
                        help="feasible schedule used as a MIP start; the result is never worse than it")
    parser.add_argument("-o", "--output", metavar="SCHEDULE", help="write the incumbent schedule here")
    parser.add_argument("--write-mps", metavar="FILE",
                        help="write the model to FILE (.mps or .lp) for re-solving elsewhere, and do not solve")
    parser.add_argument("--restart-cost", type=float, metavar="F", default=0.0,
                        help="solve the optimum with restart costs (a job loses F of a slot's work in each slot "
                             "where its placement changed, as the simulator charges it): the exact model where it "
                             "is within reach, proven by replaying its schedule through the simulator; the "
                             "start-cost relaxation's interval otherwise (default 0: the paper's model)")
    parser.add_argument("--list-solvers", action="store_true", help="list the backends and whether they run here")
    add_json_flag(parser)
    add_progress_flag(parser)
    parser.set_defaults(handler=run)


def _list_solvers(args) -> int:
    rows = []
    for name, pyomo_name in SOLVERS.items():
        available = solver_available(name)
        rows.append({
            "name": name,
            "pyomo_name": pyomo_name,
            "available": available,
            "version": solver_version(name) if available else None,
            "mip_start": name in WARMSTART_SOLVERS,
        })
    if args.json:
        print_json({"solvers": rows, "available": [row["name"] for row in rows if row["available"]]})
    else:
        print(f"{'solver':8} {'available':9} {'version':10} {'MIP start':9} pyomo")
        for row in rows:
            print(f"{row['name']:8} {'yes' if row['available'] else 'no':9} {row['version'] or '-':10} "
                  f"{'yes' if row['mip_start'] else 'no':9} {row['pyomo_name']}")
    return 0


def _format(value) -> str:
    return "-" if value is None else f"{value:.10g}"


def _method(args) -> str:
    """``--method``, with ``--relax`` and ``--pooled`` as its other spellings."""
    alias = LP if args.relax else (POOLED if args.pooled else None)
    if args.method is not None and alias is not None and args.method != alias:
        flag = "--relax" if args.relax else "--pooled"
        raise InputError(f"--method: {args.method} contradicts {flag} (which means --method {alias}); give one "
                         "of them")
    return args.method or alias or AUTO


def _solve_options(args) -> SolveOptions:
    """The command's flags as :class:`SolveOptions` (``--memory-limit`` is in GiB, the field in bytes)."""
    memory = None if args.memory_limit is None else int(args.memory_limit * 2**30)
    return SolveOptions(solver=args.solver, time_limit=args.time_limit, mip_gap=args.gap, threads=args.threads,
                        method=_method(args), formulation=args.formulation, builder=args.builder,
                        memory_limit=memory)


def _print_sources(result, instance) -> None:
    """Where the schedule comes from and, for column generation, each end's source (issue 63, item 6)."""
    if result.schedule is not None:
        print(f"admitted {len(result.schedule.admitted)} of {counted(instance.n_jobs, 'job')}"
              + (f"; incumbent from the {result.incumbent_source}" if result.incumbent_source else ""))
    if "bound_source" in result.details:
        print(f"lower end from {result.details.get('incumbent_origin', 'the solver')}; "
              f"upper end from {result.details['bound_source']}")


def run(args) -> int:
    if args.list_solvers:
        return _list_solvers(args)
    if not args.instance:
        raise InputError("INSTANCE: an instance file is required (unless --list-solvers is given)")
    method = _method(args)
    relaxation = is_relaxation(method)
    if args.output and relaxation:
        raise InputError("-o: --relax and --pooled give a bound, not a schedule (as do --method lp and "
                         "--method pooled); drop -o or choose another method")
    if args.memory_limit is not None and not (args.memory_limit >= 0.0625 and args.memory_limit < float("inf")):
        raise InputError(f"--memory-limit: must be a number of GiB >= 0.0625, got {args.memory_limit!r}")
    instance = load_instance(args.instance)
    if args.write_mps and not has_one_model(method):
        raise InputError("--write-mps: column generation has no single model to export; use --method ilp, "
                         "lp or pooled")
    start = load_schedule(args.start, instance) if args.start else None
    options = _solve_options(args)
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    # The destinations last: a refused run creates no folder (check_output makes missing parents).
    if args.output:
        check_output_path(args.output, "-o")
    if args.write_mps:
        check_output_path(args.write_mps, "--write-mps")

    if args.write_mps:
        from primaldual.offline.export import write_model

        model = METHOD_TABLE.get(method)  # auto: the ILP's model
        written = write_model(instance, args.write_mps, relax=model is not None and model.relaxed,
                              formulation=args.formulation, pooled=model is not None and model.pooled)
        if args.json:
            print_json({"written": written["path"], **written})
        else:
            print(f"wrote {written['path']} ({written['format']}): {written['n_variables']} variables, "
                  f"{written['n_constraints']} constraints")
        return 0

    if restart_cost:
        if start is not None or relaxation:
            raise InputError("--restart-cost: the restart optimum starts from the best online schedule; drop "
                             "--start, --relax and --pooled")
        from primaldual.commands._restart_solve import solve_with_restart_cost

        return solve_with_restart_cost(instance, options.replace(solver=resolve_solver(instance, options)[0]),
                                       restart_cost, output=args.output, as_json=args.json, print_json=print_json)
    from primaldual.evaluation.bounded import solve_within

    with activity("solve", progress_enabled(args)) as news:  # --time-limit bounds the online seeds too
        result = solve_within(instance, options, start=start, progress=news)
    written = None
    if args.output and result.schedule is not None:
        save_schedule(result.schedule, args.output, instance)
        written = args.output
    if args.json:
        print_json({**result.to_dict(), "output": written, "provenance": provenance()})
    else:
        what = "relaxation" if relaxation else "incumbent"
        print(
            f"status {result.status}; {what} {_format(result.objective)}; "
            f"bound {_format(result.bound)}; method {result.method}; "
            f"gap {_format(result.gap)}; solver {result.solver} {result.solver_version}; "
            f"{result.n_variables} variables, {result.n_constraints} constraints; "
            f"build {result.build_seconds:.3f} s, solve {result.solve_seconds:.3f} s"
        )
        _print_sources(result, instance)
        seeds = result.details.get("online_seeds")
        if seeds and seeds["ran"] and not seeds["skipped"]:  # a skipped seed is in the note below
            print(f"online seeds {', '.join(seeds['ran'])} in {seeds['seconds']:.1f} s")
        if result.message:
            print(f"note: {result.message}")
        if written:
            print(f"wrote {written}")
        elif args.output:
            print(f"no schedule to write to {args.output}")
    return 0 if result.success else 1
