"""``primaldual bench NAME``: timings reported as ratios against a reference in the same run."""

from __future__ import annotations

import importlib
import pkgutil

ORDER = 90


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="benchmarks (offline ILP, OASiS decisions, LB-BSP), as ratios against a same-run reference",
        description="Each benchmark prints its figures; --json prints one JSON object.",
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="NAME")
    import primaldual.benchmarks as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"primaldual.benchmarks.{info.name}")
        sub = benchmarks.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])
