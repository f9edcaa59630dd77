"""``primaldual bench NAME``: timings reported as ratios against a reference in the same run.

Each benchmark is a module of this package defining ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``, listed in :data:`BENCHMARKS`: it parses the flags and prints. What it measures is a library
call returning a frozen result (:mod:`primaldual.evaluation.bench`, :mod:`primaldual.sweep.sigterm`,
:mod:`primaldual.lbbsp.bench`), so no lower layer imports a command. Timings are reported as ratios against a reference
measured in the same run, never as absolute pass/fail thresholds.
"""

from __future__ import annotations

from primaldual.commands._progress import add_progress_flag, with_activity
from primaldual.commands._lists import comma_list
from primaldual.core.errors import InputError

ORDER = 90

#: The benchmark modules, in the order ``bench --help`` lists them.
BENCHMARKS = ("lbbsp", "oasis", "offline", "sigterm", "solvers", "trace")


def register(subparsers) -> None:
    import importlib

    parser = subparsers.add_parser(
        "bench",
        help="benchmarks (offline ILP, OASiS decisions, LB-BSP, whole trace VCs), as ratios against a same-run reference",
        description="Each benchmark prints its figures; --json prints one JSON object.",
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="NAME")
    for name in BENCHMARKS:
        # Imported when the parser is built, like every command; each module defers its heavy imports.
        module = importlib.import_module(f"{__name__}.{name}")
        sub = benchmarks.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        add_progress_flag(sub)
        sub.set_defaults(handler=with_activity(f"bench {module.NAME}", module.run), parser=sub)
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])


def refuse_unused(args, applies: dict[str, tuple[str, ...]], mode: str) -> None:
    """Refuse a flag set away from its default that the chosen ``mode`` does not read (a benchmark that ran
    without it printed figures the user did not ask for, without a word, issue 53): ``applies`` maps each
    mode-specific flag to the modes that read it; a flag not in it applies to every mode."""
    parser = args.parser
    for action in parser._actions:
        flag = max(action.option_strings, key=len, default="")
        modes = applies.get(flag)
        if modes is None or mode in modes:
            continue
        if getattr(args, action.dest) != parser.get_default(action.dest):
            raise InputError(f"{flag}: only applies to {' or '.join(modes)}; {mode} does not read it")


def names(text: str | None, flag: str) -> list[str] | None:
    """A list flag's names by the one rule of lists (:mod:`primaldual.commands._lists`); None when not given."""
    return None if text is None else comma_list(text, flag)
