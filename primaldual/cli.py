"""The ``primaldual`` command line.

Each subcommand lives in its own module under :mod:`primaldual.commands` and exposes
``register(subparsers)``; this module discovers them, so adding a command touches no shared file.
Exit codes (design.md section 4): 0 success, 1 a negative answer, 2 bad input (message, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from primaldual import __version__
from primaldual.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="primaldual",
        description=(
            "Schedule distributed ML training jobs in a shared cluster: generate instances, "
            "compute the offline optimum, run online schedulers (OASiS and baselines), compare them, "
            "and simulate LB-BSP batch sizing."
        ),
        epilog="Run 'primaldual COMMAND --help' for the flags of one command.",
    )
    parser.add_argument("--version", action="version", version=f"primaldual {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    import primaldual.commands as commands_package

    modules = []
    for info in pkgutil.iter_modules(commands_package.__path__):
        if info.name.startswith("_"):
            continue
        modules.append(importlib.import_module(f"primaldual.commands.{info.name}"))
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.__name__)):
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except InputError as error:
        print(f"primaldual {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`primaldual ... | head`): not an error of ours, and no traceback.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"primaldual {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
