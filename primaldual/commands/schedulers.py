"""``primaldual schedulers``: every registered scheduler with its parameters, defaults and one-line doc.

The list is read from the classes themselves (:func:`primaldual.simulation.scheduler.scheduler_info`: the ``__init__``
signature and the docstrings), so a scheduler registered by a third-party package shows up like the built-in ones.
"""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.core.domains import show
from primaldual.simulation.scheduler import available_schedulers, scheduler_info

ORDER = 35


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "schedulers",
        help="list the online schedulers with their parameters (for --scheduler and --param)",
        description="Every registered scheduler, its parameters with their defaults, and what they mean. "
                    "Set a parameter with 'run --param KEY=VALUE' or 'compare --param NAME.KEY=VALUE'.",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    infos = [scheduler_info(name) for name in available_schedulers()]
    if args.json:
        print_json({"schedulers": infos})
        return 0
    for info in infos:
        print(f"{info['name']}: {info['doc']}")
        if info["any_keyword"]:
            print("    (takes any keyword parameters)")
        elif not info["parameters"]:
            print("    (no parameters)")
        for p in info["parameters"]:
            default = "required" if p["required"] else f"default {show(p['default'])}"
            doc = f": {p['doc']}" if p["doc"] else ""
            print(f"    {p['name']} ({default}){doc}")
    return 0
