"""``primaldual schedulers``: every registered scheduler with its parameters: type, default, valid values, meaning.

The list is read from the classes themselves (:func:`primaldual.simulation.scheduler.scheduler_info`: the ``__init__``
signature and the docstrings), so a scheduler registered by a third-party package shows up like the built-in ones.
"""

from __future__ import annotations

from primaldual.commands._common import add_json_flag, print_json
from primaldual.core.domains import show
from primaldual.simulation.parameters import HOW_TO_SET
from primaldual.simulation.scheduler import GAVEL_POLICIES, available_schedulers, scheduler_info

ORDER = 35


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "schedulers",
        help="list the online schedulers with their parameters (for --scheduler and --param)",
        description="Every registered scheduler and, for each parameter, its type, default, valid values and "
                    "meaning. Set a parameter with 'compare --param NAME.KEY=VALUE' (also ratio, and [param.NAME] "
                    "in an experiment file) or 'run --scheduler NAME --param KEY=VALUE'.",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def _type(parameter: dict) -> str:
    """The annotation as a user reads it: ``int | None`` -> ``int or null``."""
    text = str(parameter["type"] or "any JSON value").replace("None", "null")
    return " or ".join(part.strip() for part in text.split("|"))


def run(args) -> int:
    infos = [scheduler_info(name) for name in available_schedulers() + list(GAVEL_POLICIES)]
    if args.json:
        print_json({"schedulers": infos, "how_to_set": HOW_TO_SET})
        return 0
    print(f"Set a parameter with {HOW_TO_SET}.")
    for info in infos:
        print(f"\n{info['name']}: {info['doc']}")
        if info["any_keyword"]:
            print("    (takes any keyword parameters)")
        elif not info["parameters"]:
            print("    (no parameters)")
        for p in info["parameters"]:
            default = "required" if p["required"] else f"default {show(p['default'])}"
            valid = f"; valid: {p['valid']}" if p["valid"] else ""
            print(f"    {info['name']}.{p['name']} ({_type(p)}, {default}{valid})")
            if p["meaning"]:
                print(f"        {p['meaning']}")
            if p["name"] == "replan":
                print(f"        {replan_limits()}")
    return 0


def replan_limits() -> str:
    """Where ``replan=true`` acts (commands/_replan.py refuses it, or says so, elsewhere)."""
    from primaldual.oasis.lr.replan import REPLAN_CELLS

    return (f"acts only with lookahead=true, on instances of at most {REPLAN_CELLS:,} job-slot-servers (jobs x "
            "replan_horizon slots x servers); 'run' and 'compare' say when an instance is over it")
