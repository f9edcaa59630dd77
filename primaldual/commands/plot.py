"""``primaldual plot FILE``: PNG figures from a sweep's results file."""

from __future__ import annotations

from pathlib import Path

from primaldual.commands._common import add_json_flag, print_json
from primaldual.errors import InputError

ORDER = 65


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="PNG figures from a sweep results file (ratio distributions, utility vs number of jobs)",
        description=(
            "Read a JSON Lines results file written by 'primaldual ratio' (or primaldual.sweep.sweep) and "
            "write one PNG per figure that fits: the distribution of OPT/ALG per scheduler with certified "
            "intervals, and total utility against every knob that varies (jobs, capacity, servers, load)."
        ),
        epilog="Exit codes: 0 figures written, 1 no record to plot, 2 bad input (a malformed line is named).",
    )
    parser.add_argument("file", help="results file (JSON Lines)")
    parser.add_argument("--out", help="output directory (default: the results file's folder)")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    from primaldual.plots import plot_records
    from primaldual.records import read_records

    path = Path(args.file)
    if not path.is_file():
        raise InputError(f"FILE: no such results file: {path}")
    records = list(read_records(path).values())
    out_dir = Path(args.out) if args.out else path.parent
    written = plot_records(records, out_dir, prefix=path.stem + "-") if records else []
    if args.json:
        print_json({"records": len(records), "figures": [str(p) for p in written]})
    else:
        if not written:
            print(f"{path}: {len(records)} records, nothing to plot")
        for figure in written:
            print(figure)
    return 0 if written else 1
