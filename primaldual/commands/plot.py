"""``primaldual plot``: figures from a sweep's results file, or a Gantt chart of one schedule.

Two forms, told apart by the first argument:

- ``primaldual plot RESULTS --out DIR``: every figure that fits the sweep's records (ratios, utility curves,
  and, where records carry per-job outcomes, JCT, fairness, utility and utilisation distributions);
- ``primaldual plot schedule INSTANCE SCHEDULE --out FILE.png|.pdf|.svg``: one schedule as a Gantt chart above
  job states and utilisation per pool (:mod:`primaldual.views.gantt`);
- ``primaldual plot --from-csv FIGURE.csv [--out FILE.png|.pdf|.svg]``: redraw a figure from the CSV written
  beside it (:mod:`primaldual.views.figure_data`).
"""

from __future__ import annotations

from pathlib import Path

from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._progress import add_progress_flag, with_activity
from primaldual.core.errors import InputError

ORDER = 65
#: Figure formats ``plot schedule`` writes, by file suffix.
SCHEDULE_FORMATS = (".png", ".pdf", ".svg")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="figures from a sweep results file, or a Gantt chart of one schedule ('plot schedule I S')",
        usage=("primaldual plot RESULTS [--out DIR] [--json]\n"
               "       primaldual plot schedule INSTANCE SCHEDULE --out FILE.png|.pdf|.svg [--max-rows N] [--json]\n"
               "       primaldual plot --from-csv FIGURE.csv [--out FILE.png|.pdf|.svg] [--json]"),
        description=(
            "RESULTS: read a JSON Lines results file written by 'primaldual ratio' (or primaldual.sweep.sweep) "
            "and write each figure that fits as PNG and PDF with the CSV of its plotted numbers beside it: OPT/ALG per scheduler with certified intervals, total "
            "utility against every knob that varies (jobs, capacity, servers, load) with seed counts and error "
            "bars, and, where the records carry per-job outcomes, JCT CDFs, utility per job against its "
            "standalone utility, finish-time fairness and utilisation per scheduler. "
            "'schedule INSTANCE SCHEDULE': draw one schedule (e.g. from 'primaldual run I --scheduler oasis "
            "-o S.json') as a Gantt chart, one row per job (arrival, waiting, running with its worker count, "
            "completion, deadlines; rejected and abandoned jobs marked), above the number of jobs in each "
            "state and the utilisation of each pool and resource per slot. With more jobs than --max-rows, the "
            "chart shows an evenly spaced sample of rows and says so; the panels below count every job. "
            "'--from-csv FIGURE.csv': redraw a figure from its CSV alone (as PNG and PDF beside it, or into --out)."
        ),
        epilog=("Exit codes: 0 figures written, 1 no record to plot (RESULTS form), 2 bad input (a missing or "
                "malformed file, a schedule that does not fit the instance, an unwritable --out)."),
    )
    parser.add_argument("paths", nargs="*", metavar="RESULTS | schedule INSTANCE SCHEDULE",
                        help="a results file (JSON Lines), or the word 'schedule' then an instance and a schedule")
    parser.add_argument("--out", help="RESULTS: output folder (default: the results file's folder); "
                                      "schedule: the figure file, .png, .pdf or .svg (required); --from-csv: the "
                                      "figure file (default: PNG and PDF beside the CSV)")
    parser.add_argument("--from-csv", metavar="FIGURE.csv", help="redraw the figure whose numbers this CSV holds")
    parser.add_argument("--max-rows", type=int, default=None, metavar="N",
                        help="schedule: most job rows drawn before sampling (default: 40)")
    add_json_flag(parser)
    add_progress_flag(parser)
    parser.set_defaults(handler=with_activity("plot", run))


def run(args) -> int:
    if args.from_csv is not None:
        if args.paths:
            raise InputError("--from-csv: give no other path")
        if args.max_rows is not None:
            raise InputError("--max-rows: only applies to 'plot schedule'")
        return run_from_csv(args)
    if not args.paths:
        raise InputError("RESULTS: give a results file, 'schedule INSTANCE SCHEDULE', or --from-csv FIGURE.csv")
    first = args.paths[0]
    if first == "schedule" and not (len(args.paths) == 1 and Path(first).is_file()):
        return run_schedule(args, args.paths[1:])
    if len(args.paths) != 1:
        raise InputError("RESULTS: give one results file, or 'schedule INSTANCE SCHEDULE'")
    if args.max_rows is not None:
        raise InputError("--max-rows: only applies to 'plot schedule'")
    return run_records(args, Path(first))


def run_records(args, path: Path) -> int:
    from primaldual.sweep.records import read_records
    from primaldual.sweep.distributions import distribution_summary
    from primaldual.views.sweep_figures import caption_for, plot_records

    if not path.is_file():
        raise InputError(f"RESULTS: no such results file: {path}")
    _refuse_other_formats(path)
    out_dir = check_output_path(args.out if args.out else path.parent, "--out", directory=True)
    records = list(read_records(path).values())
    written = plot_records(records, out_dir, prefix=path.stem + "-") if records else []
    if args.json:
        print_json({"records": len(records), "figures": [str(p) for p in written],
                    "captions": {str(p): caption_for(p) for p in written},
                    "distributions": distribution_summary(records)})
    else:
        if not written:
            print(f"{path}: {len(records)} records, nothing to plot")
        for figure in written:
            print(figure)
    return 0 if written else 1


#: Files of the package that are not sweep results, with what to do with them instead.
_NOT_RESULTS = {
    "primaldual.instance": "an instance file; to draw a schedule of it: primaldual plot schedule INSTANCE SCHEDULE "
                           "--out FILE.png",
    "primaldual.schedule": "a schedule file; to draw it: primaldual plot schedule INSTANCE SCHEDULE --out FILE.png",
}


def _refuse_other_formats(path: Path) -> None:
    """An instance or schedule file given as RESULTS is named as such (its ``format`` is near its start)."""
    import re

    with open(path, "rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace")
    found = re.search(r'"format"\s*:\s*"([^"]+)"', head)
    if found and found.group(1) in _NOT_RESULTS:
        raise InputError(f"RESULTS: {path} is {_NOT_RESULTS[found.group(1)]}; RESULTS is the JSON Lines file of "
                         "'primaldual ratio'")


def run_from_csv(args) -> int:
    from primaldual.views.redraw import figure_from_csv

    out = check_output_path(args.out, "--out") if args.out else None
    written = figure_from_csv(args.from_csv, out)
    if args.json:
        print_json({"from_csv": str(args.from_csv), "figures": [str(p) for p in written]})
    else:
        for figure in written:
            print(figure)
    return 0


def run_schedule(args, paths: list[str]) -> int:
    from primaldual.core.files import load_instance, load_schedule
    from primaldual.core.verify import verify
    from primaldual.views.gantt import MAX_ROWS, sampled_rows, save_schedule_figure

    if len(paths) != 2:
        raise InputError(f"schedule: expected INSTANCE SCHEDULE, got {len(paths)} path(s)")
    if not args.out:
        raise InputError("--out: required with 'plot schedule' (a .png, .pdf or .svg file)")
    if Path(args.out).suffix.lower() not in SCHEDULE_FORMATS:
        raise InputError(f"--out: must end in .png, .pdf or .svg, got {args.out!r}")
    max_rows = MAX_ROWS if args.max_rows is None else args.max_rows
    if max_rows < 1:
        raise InputError(f"--max-rows: must be >= 1, got {max_rows}")
    out = check_output_path(args.out, "--out")
    instance = load_instance(paths[0])
    schedule = load_schedule(paths[1], instance)
    report = verify(instance, schedule)
    if not report.feasible:
        # A schedule written for another instance of the same size parses, but breaks its constraints.
        first = report.violations[0]
        raise InputError(f"SCHEDULE: does not fit INSTANCE {paths[0]}: {len(report.violations)} violation(s), "
                         f"first: {first.message} (see 'primaldual verify')", source=paths[1])
    save_schedule_figure(instance, schedule, out, max_rows=max_rows)
    rows = len(sampled_rows(instance.n_jobs, max_rows))
    if args.json:
        print_json({"figure": str(out), "jobs": instance.n_jobs, "rows": rows, "sampled": rows < instance.n_jobs,
                    "utility": report.utility})
    else:
        note = f", {rows} of {instance.n_jobs} job rows drawn (evenly spaced)" if rows < instance.n_jobs else ""
        print(f"wrote {out}{note}")
    return 0
