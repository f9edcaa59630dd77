"""``primaldual reproduce``: regenerate every headline figure and a summary with PASS/FAIL per result."""

from __future__ import annotations

import sys

from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._progress import progress_enabled
from primaldual.commands.ratio import add_executor_arguments, check_executor
from primaldual.simulation.simulator import check_restart_cost
from primaldual.reproduce.experiments import RESTART_COST, SECTIONS

ORDER = 80


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="regenerate the headline figures and summary.md (expected result, tolerance, PASS/FAIL each)",
        description=(
            "Run every scheduler (oasis, oasis-lr, oasis-p, greedy, fifo, drf, three readings of rrh, dorm) on "
            "the competitive-ratio sets (tiny, small, 20-job small) and on the paper preset (total utility vs "
            "number of jobs and vs capacity), each at restart cost 0 and --restart-cost; without --quick also "
            "OPT's certified interval on the paper preset by column generation; then LB-BSP's benchmark and "
            "expectations; then real arrivals: every scheduler on packaged Philly VCs (the busiest weeks of the "
            "five busiest VCs with OPT by column generation, small VCs whole; --quick: a 12-hour window and two "
            "tiny VCs). Writes figures/, results.jsonl and traces.jsonl (resumable: a rerun computes only what is missing), "
            "lbbsp.json, summary.json and summary.md into --out. --quick takes minutes on two cores; the full "
            "run takes hours (Dorm re-solves a MILP at every event on 300-job instances); --sections runs a "
            "subset (--sections traces: the real arrivals alone), and the summary reports only that subset."
        ),
        epilog="Exit codes: 0 no expectation failed (a check left INCONCLUSIVE by a solver's time limit is not a "
               "failure; a rerun recomputes it), 1 some failed (see summary.md), 2 bad input.",
    )
    parser.add_argument("--quick", action="store_true", help="the small settings (minutes on 2 cores)")
    parser.add_argument("--config", metavar="FILE.toml",
                        help="experiment file: keys are this command's flags (examples/reproduce-quick.toml)")
    parser.add_argument("--out", help="output directory (required, here or as out = \"DIR\" in --config)")
    parser.add_argument("--restart-cost", type=float, metavar="F", default=RESTART_COST,
                        help="every experiment also runs with this restart cost, the fraction of a slot's work a "
                             f"job loses when its placement changes, in [0, 1) (default: {RESTART_COST:g}; 0: only "
                             "the paper's model)")
    parser.add_argument("--sections", default=",".join(SECTIONS), metavar="NAMES",
                        help="comma-separated sections to run, among " + ", ".join(SECTIONS) + " (default: all); "
                             "summary.md reports only these: " + "; ".join(f"{k}: {v}" for k, v in SECTIONS.items()))
    add_executor_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (it shows only when stderr is a terminal)")
    add_json_flag(parser)
    parser.set_defaults(handler=run, parser=parser)


def run(args) -> int:
    from primaldual.core.errors import InputError
    from primaldual.reproduce import reproduce
    from primaldual.sweep import dask_executor

    from primaldual.commands._config import apply_config
    from primaldual.commands._flags import check_parsed

    args = apply_config(args, args.parser)
    check_parsed("reproduce", args.parser, args)  # the experiment file's values have the flags' ranges and paths
    if not args.out:
        raise InputError("--out: required (the output directory), on the command line or as out = \"DIR\" in "
                         "--config")
    check_executor(args)
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    sections = parse_sections(args.sections)
    out = check_output_path(args.out, "--out", directory=True)
    log = (lambda message: print(message, file=sys.stderr)) if args.json else print
    options = dict(quick=args.quick, progress=progress_enabled(args), log=log, restart_cost=restart_cost,
                   sections=sections)
    if args.executor == "dask":
        with dask_executor(args.address, args.workers) as executor:
            result = reproduce(out, executor=executor, **options)
    else:
        result = reproduce(out, workers=args.workers, **options)
    if args.json:
        print_json({
            "out": str(result.out),
            "sections": result.extra["sections"],
            "passed": result.passed,
            "inconclusive": result.inconclusive,
            "seconds": result.seconds,
            "outcomes": [o.to_dict() for o in result.outcomes],
            "figures": [str(p) for p in result.figures],
        })
    else:
        for outcome in result.outcomes:
            print(f"{outcome.verdict:>14}  {outcome.result}: {outcome.measured}")
        print(f"{result.out / 'summary.md'} ({result.seconds:.0f} s)")
    return 0 if result.passed else 1


def parse_sections(text: str) -> tuple[str, ...]:
    """``--sections``'s comma-separated names as a tuple; an empty list or an unknown name is bad input (exit 2),
    named in one line with the allowed names, before anything runs or is written."""
    from primaldual.commands._lists import comma_list
    from primaldual.core.errors import InputError
    from primaldual.core.numerals import echo

    names = comma_list(text, "--sections")
    if any(name not in SECTIONS for name in names):
        raise InputError(f"--sections: must list sections among {', '.join(SECTIONS)} (comma-separated), "
                         f"got {echo(text)}")
    return tuple(names)
