"""``primaldual compare``: the package's main job. Every scheduler on one instance, beside the offline optimum.

Runs the online schedulers (all registered ones by default) through the simulator, checks every schedule
with the independent verifier, optionally solves the offline ILP with a time limit (seeded with the best
online schedule as a MIP start), and prints one table: utility, admitted, completed, mean JCT, OPT/ALG and
the scheduler's own runtime, followed by the certificate a scheduler offers (OASiS's) and, when oasis-lr earns
less than the best baseline of the comparison, a line saying which and by how much (``behind_best_baseline``).

The work is done by :func:`primaldual.evaluation.compare.compare` (:mod:`primaldual.evaluation.bounds` says how OPT/ALG is bounded);
this module parses the flags and prints the table, where an OPT/ALG interval shows "-" for an end that is
unbounded (ALG = 0). Steps that run longer than a few seconds say so on stderr.

Exit codes: 0 when every scheduler ran and every schedule verified; 1 when a scheduler broke a rule (its row
says which) or a schedule failed verification; 2 on bad input.
"""

from __future__ import annotations

import math
import sys

from primaldual.commands._common import add_json_flag, print_json
from primaldual.commands._lists import comma_list
from primaldual.commands._replan import replan_note
from primaldual.commands.run import add_instance_arguments, instance_from_args, parse_parameter
from primaldual.evaluation.compare import compare
from primaldual.core.errors import InputError
from primaldual.core.plural import counted
from primaldual.core.provenance import provenance
from primaldual.commands._solve_flags import add_solve_arguments, solve_options_from_args
from primaldual.simulation.simulator import ReportedLookahead, check_restart_cost
from primaldual.commands._progress import add_progress_flag, progress_enabled, slow_steps
from primaldual.simulation.scheduler import GAVEL_POLICIES, available_schedulers, scheduler_class

ORDER = 50


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="the main job: run every scheduler on an instance and compare with the offline optimum",
        description=(
            "Run the online schedulers (all registered ones by default) on one instance, verify every "
            "schedule, optionally solve the offline optimum (--opt), and print utility, admitted, completed, "
            "mean JCT, OPT/ALG (an interval when OPT is not proven) and runtime per scheduler, with OASiS's "
            "certificate, and a last line when oasis-lr earns less than the best baseline (greedy, fifo, drf, "
            "rrh and its readings, dorm). Try: primaldual compare --preset small --seed 3 --opt"
        ),
        epilog="Exit 0 on success, 1 if a scheduler broke a rule or a schedule failed verification, 2 on bad input.",
    )
    add_instance_arguments(parser)
    parser.add_argument("--schedulers", metavar="A,B,...",
                        help=f"comma-separated scheduler names (default: all: {', '.join(available_schedulers())}; "
                             f"on several GPU types those that handle them, and {', '.join(GAVEL_POLICIES)})")
    parser.add_argument("--param", action="append", default=[], metavar="NAME.KEY=VALUE",
                        help="a scheduler's parameter (repeatable), e.g. --param fifo.workers=2")
    parser.add_argument("--opt", action="store_true", help="also solve the offline optimum (ILP)")
    add_solve_arguments(parser)
    add_json_flag(parser)
    add_progress_flag(parser)
    parser.set_defaults(handler=run)


def untyped_note(names: list[str], instance) -> tuple[list[str], str | None]:
    """On a heterogeneous instance, the default list without the schedulers that do not handle GPU types
    (``handles_gpu_types``; a named one refuses in the simulator) and with Gavel's policies, which run by name
    elsewhere (:data:`~primaldual.simulation.scheduler.GAVEL_POLICIES`), and one line saying which were left out."""
    if not instance.cluster.heterogeneous:
        return names, None
    names = names + [name for name in GAVEL_POLICIES if name not in names]
    left = [name for name in names if not getattr(scheduler_class(name), "handles_gpu_types", False)]
    kept = [name for name in names if name not in left]
    if not left:
        return kept, None
    return kept, f"left out on a heterogeneous cluster (gpu types), which they do not handle yet: {', '.join(left)}"


def _scheduler_names(text: str | None) -> list[str]:
    if text is None:
        return available_schedulers()
    names = comma_list(text, "--schedulers")
    for name in names:
        scheduler_class(name)  # raises InputError naming the available schedulers
    return names


def scheduler_parameters(texts: list[str], names: list[str]) -> dict[str, dict]:
    """``--param NAME.KEY=VALUE`` flags as ``{scheduler: {key: value}}``; a key given twice is refused naming it."""
    out: dict[str, dict] = {name: {} for name in names}
    for text in texts:
        key, value = parse_parameter(text)
        name, dot, field = key.partition(".")
        if not dot or not field:
            raise InputError(f"--param: must look like NAME.KEY=VALUE (e.g. fifo.workers=2), got {text!r}")
        if name not in out:
            raise InputError(f"--param: scheduler {name!r} is not being compared ({', '.join(names)})")
        if field in out[name]:
            raise InputError(f"--param: {key} given twice ({key}={out[name][field]!r} and {text!r}); give it once")
        out[name][field] = value
    return out


def check_schedulers(parameters: dict[str, dict], flag: str = "--schedulers") -> None:
    """Build each scheduler once with its parameters, so that an unknown name or a value the scheduler refuses
    is exit 2 before a command creates any file (a sweep's workers would only meet it after the results file
    and its settings were written, issue 53). Building one costs milliseconds; nothing is simulated."""
    from primaldual.simulation.scheduler import make_scheduler

    for name, values in parameters.items():
        scheduler_class(name, flag)
        make_scheduler(name, **values)  # every range, and a parameter that cannot act, refused here


def replan_notes(parameters: dict[str, dict], instance) -> list[str]:
    """The schedulers whose ``replan=true`` will not run on ``instance`` (:func:`replan_note`), one line each."""
    from primaldual.simulation.scheduler import make_scheduler

    notes = (replan_note(name, make_scheduler(name, **values), instance)
             for name, values in parameters.items() if values.get("replan"))
    return [note for note in notes if note]


def _num(value, digits: int = 6) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}"


def _ratio_text(ratio: dict | None) -> str:
    if not ratio:
        return "-"
    low, high = ratio["lower"], ratio["upper"]
    if ratio["proven"] or (low is not None and high is not None and math.isclose(low, high, rel_tol=1e-9)):
        return _fixed(low)
    return f"[{_fixed(low)}, {_fixed(high)}]"


def _fixed(value) -> str:
    return "-" if value is None else f"{value:.5f}"


def _end_method(name: str | None, opt: dict | None) -> str | None:
    """An end of the OPT interval with the offline method behind it when the solver gave it (``solver (cg)``):
    ``--method auto`` picks the method by size, so the table says which one produced the number."""
    if name == "solver" and opt is not None and opt.get("method"):
        return f"solver ({opt['method']})"
    return name


def _print_table(summary: dict, source: str) -> None:
    instance = summary["instance"]
    print(f"compare on {source}: {counted(instance['jobs'], 'job')}, {counted(instance['horizon'], 'slot')}, "
          f"{instance['worker_servers']} worker + {counted(instance['ps_servers'], 'PS server')}")
    width = max([12, *(len(row["scheduler"]) for row in summary["rows"])])
    header = f"{'scheduler':<{width}} {'utility':>10} {'admitted':>8} {'completed':>9} {'mean JCT':>8}  {'OPT/ALG':<20} {'runtime s':>9}"
    print(header)
    print("-" * len(header))
    for row in summary["rows"]:
        if "error" in row:
            print(f"{row['scheduler']:<{width}} FAILED: {row['error']}")
            continue
        mark = "" if row["verified"] else "  NOT VERIFIED"
        print(f"{row['scheduler']:<{width}} {row['utility']:>10.4f} {row['admitted']:>8} {row['completed']:>9} "
              f"{_num(row['mean_jct'], 4):>8}  {_ratio_text(row.get('ratio')):<20} {row['seconds']:>9.3f}{mark}")
    opt = summary["opt"]
    if opt is not None:
        seconds = opt["build_seconds"] + opt["solve_seconds"]
        objective = "-" if opt["objective"] is None else f"{opt['objective']:.4f}"
        label = "OPT" if opt.get("relaxation") is None else "OPT bound"
        print(f"{label:<{width}} {objective:>10} {_num(opt.get('admitted')):>8} {_num(opt.get('completed')):>9} "
              f"{_num(opt.get('mean_jct'), 4):>8}  {'1.00000' if opt['status'] == 'optimal' and not summary['restart_cost'] else '-':<20} {seconds:>9.3f}")
        print(f"{label}: {opt['status']} ({opt.get('method', 'ilp')}, {opt['solver']}); incumbent {_num(opt['objective'])}, bound {_num(opt['bound'])}, "
              f"gap {_num(opt['gap'], 3)}" + (f"; MIP start from {opt['start_scheduler']} "
                                               f"({_num(opt['start_objective'])})" if opt["start_scheduler"] else ""))
        if opt.get("message"):
            print(f"     note: {opt['message']}")
    interval = summary["opt_interval"]
    print(f"OPT lies in [{_num(interval['low'])}, {_num(interval['high'])}] "
          f"(low: {_end_method(interval['low_method'], opt) or 'nothing earned'}, "
          f"high: {_end_method(interval['high_method'], opt)})")
    if summary["restart_cost"]:
        relaxed = summary.get("relaxation") is not None
        exact = interval["proven"] and opt is not None and opt.get("model") == "restart"
        print(f"Restart cost {summary['restart_cost']:g}: utilities are net of restarts; OPT is the optimum with "
              "restart costs, " + ("proven by the exact restart model (its schedule replayed through the "
                                   "simulator)" if exact else "bounded above by the start-cost relaxation (every job needs one more "
                                   "worker-slot, proofs/oasis-lr.md, Lemma R); the solve and the standalone bound "
                                   "are of that relaxation" if relaxed else "bounded above by the model without them"))
    certificate = summary["certificate"]
    if certificate is not None:
        low, high = certificate["ratio_interval"]
        name = certificate["scheduler"]
        print(f"{name} certificate: dual bound D = {_num(certificate.get('dual_objective'))}, standalone bound "
              f"{_num(interval['upper_candidates']['standalone'])}; certified OPT/ALG({name}) in "
              f"[{_fixed(low)}, {_fixed(high)}]")
    for row in summary["rows"]:
        if row.get("lookahead") is not None:
            print(f"{row['scheduler']} {ReportedLookahead(**row['lookahead']).describe()}")
    behind = summary.get("behind_best_baseline")
    if behind is not None:
        print(behind_line(behind))
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)


def behind_line(behind: dict) -> str:
    """The footer saying that oasis-lr earns less than the best baseline, and by how much (``gap`` relative to
    the baseline's utility): ``oasis-lr trails the best baseline, drf (8,568.5), by 0.07%``."""
    gap = behind["gap"] * 100
    percent = f"{gap:.2f}%" if gap >= 0.01 else f"{gap:.2g}%"  # a gap under 0.01% is not printed as 0.00%
    return (f"{behind['scheduler']} trails the best baseline, {behind['baseline']} "
            f"({behind['baseline_utility']:,.1f}), by {percent}")


def run(args) -> int:
    solve = solve_options_from_args(args)
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    if args.opt:
        solve.check_available()
    instance, source = instance_from_args(args)
    names = _scheduler_names(args.schedulers)
    if args.schedulers is None:
        names, note = untyped_note(names, instance)
        if note:
            print(f"primaldual compare: {note}", file=sys.stderr)
    parameters = scheduler_parameters(args.param, names)
    check_schedulers({name: values for name, values in parameters.items() if values})
    for note in replan_notes(parameters, instance):
        print(f"primaldual compare: {note}", file=sys.stderr)
    summary = compare(instance, names, parameters, opt=args.opt, solve=solve, restart_cost=restart_cost,
                      step=slow_steps("compare", enabled=progress_enabled(args))).summary
    summary["instance"]["source"] = source
    failed = any(not row.get("verified") for row in summary["rows"]) or (
        summary["opt"] is not None and summary["opt"].get("verified") is False)
    if args.json:
        print_json({**summary, "provenance": provenance()})
        for warning in summary["warnings"]:
            print(f"warning: {warning}", file=sys.stderr)
    else:
        _print_table(summary, source)
    return 1 if failed else 0
