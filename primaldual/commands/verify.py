"""``primaldual verify``: check a schedule against an instance with the independent verifier."""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.core.files import load_instance, load_schedule
from primaldual.core.plural import counted
from primaldual.core.verify import verify

ORDER = 20


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a schedule's feasibility (eqs. 2-13) and recompute its utility (eq. 1)",
        description=(
            "Exit 0 if the schedule is feasible, 1 if it is not (every violation is listed with job, slot, "
            "server and resource), 2 if a file is unreadable or malformed."
        ),
    )
    parser.add_argument("instance", help="instance JSON file")
    parser.add_argument("schedule", help="schedule JSON file")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    instance = load_instance(args.instance)
    schedule = load_schedule(args.schedule, instance)
    report = verify(instance, schedule)
    if args.json:
        print_json(report.to_dict())
    else:
        status = "feasible" if report.feasible else f"INFEASIBLE ({counted(len(report.violations), 'violation')})"
        print(f"{status}; utility {report.utility:.6g}; {counted(report.admitted, 'job')} admitted")
        for violation in report.violations:
            print(f"  eq. {violation.equation} [{violation.kind}] {violation.message}")
    return 0 if report.feasible else 1
