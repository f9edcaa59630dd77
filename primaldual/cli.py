"""The ``primaldual`` command line.

Each subcommand lives in its own module under :mod:`primaldual.commands` and exposes
``register(subparsers)``; this module discovers them, so adding a command touches no shared file.
Exit codes: 0 success, 1 a negative answer, 2 bad input (a one-line message per problem, no traceback),
130 after Ctrl-C and 143 after SIGTERM (each with a one-line message; cleanup runs as for Ctrl-C).
"""

from __future__ import annotations

import os
import signal
import sys


def _terminated_while_starting(signum, frame):  # pragma: no cover - exercised by bench sigterm
    # Before main() has installed its handler (the imports below take a while) nothing needs cleaning up.
    os.write(2, b"primaldual: terminated (SIGTERM)\n")
    os._exit(143)


def _is_the_command() -> bool:
    """This process is the ``primaldual`` command starting (not a library import, not a spawned worker that
    re-imports the command's main module)."""
    # A spawned worker runs with the parent's sys.argv (multiprocessing restores it before it imports the
    # command's main module); its own interpreter arguments say what it is.
    if "--multiprocessing-fork" in getattr(sys, "orig_argv", sys.argv):
        return False
    return __name__ == "__main__" or os.path.basename(sys.argv[0]) in ("primaldual", "__main__.py")


if _is_the_command() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
    signal.signal(signal.SIGTERM, _terminated_while_starting)

import argparse  # noqa: E402
import importlib  # noqa: E402
import pkgutil  # noqa: E402
import warnings  # noqa: E402

from primaldual import __version__  # noqa: E402
from primaldual.core.errors import InputError  # noqa: E402

#: numpy's floating-point RuntimeWarnings (an inf or NaN inside a vectorised step whose result is masked or
#: handled) say nothing a user can act on; the command line does not show them. Other warnings still show.
NUMPY_NOISE = (r"(divide by zero|invalid value|overflow|underflow) encountered|Mean of empty slice"
               r"|Degrees of freedom <= 0")


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: ``primaldual CMD: error: MESSAGE (see primaldual CMD --help)``, exit 2
    (argparse's own error prints the usage block first)."""

    def error(self, message: str):
        # an int of 5000 digits is quoted in argparse's message
        self.exit(2, f"{self.prog}: error: {cut_line(message, 300)} (see {self.prog} --help)\n")


#: Longest line of an error message. Every refused value passes through one message; one echoed whole (a
#: PRIMALDUAL_KERNEL of 100,000 characters) made a 100 kB line.
MAX_ERROR_LINE = 1000


def cut_line(line: str, limit: int = MAX_ERROR_LINE) -> str:
    """``line`` when at most ``limit`` characters; else its start (the flag or field named first) and its end
    (what to do instead), the middle counted."""
    if len(line) <= limit:
        return line
    head, tail = limit * 3 // 5, limit // 5
    return f"{line[:head]}... ({len(line) - head - tail:,} characters cut) ...{line[-tail:]}"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
    from primaldual.commands._numbers import use_ascii_numbers

    use_ascii_numbers(parser)
    return parser


def _missing_subcommand(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser | None:
    """The command's parser if it has subcommands of its own (``lbbsp``, ``bench``) and none was given."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = commands.choices.get(args.command)
    for action in command._actions if command else ():
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) is None:
            return command
    return None


def _one_line_warning(name: str, fallback):
    """The package's own warnings (a schedule file without an instance fingerprint) as one line on stderr."""
    from primaldual.core.fingerprint import UnstampedScheduleWarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UnstampedScheduleWarning):
            print(f"{name}: warning: {message}", file=sys.stderr)
        else:
            fallback(message, category, filename, lineno, file, line)

    return show


def main(argv: list[str] | None = None) -> int:
    from primaldual.backends.processes import Terminated, terminate_like_interrupt
    from primaldual.core.provenance import set_command_line

    # First, before the (slow) parser build imports every command: SIGTERM from here on ends like Ctrl-C.
    previous = terminate_like_interrupt()
    name = "primaldual"
    set_command_line(["primaldual", *(sys.argv[1:] if argv is None else argv)])
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        name = f"primaldual {args.command}" if args.command else name
        from primaldual.commands._flags import check_command_flags

        check_command_flags(parser, args)
        # No command, or a command with subcommands given none: a usage error, with the help that lists the
        # choices on stderr (stdout stays for results) and exit 2.
        usage = parser if not getattr(args, "handler", None) else _missing_subcommand(parser, args)
        if usage is not None:
            usage.print_help(sys.stderr)
            return 2
        from primaldual.dual.kernel import mode

        mode()  # PRIMALDUAL_KERNEL is input too: refused here, before any command creates a file (issue 53)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=NUMPY_NOISE, category=RuntimeWarning)
            warnings.showwarning = _one_line_warning(name, warnings.showwarning)
            return int(args.handler(args) or 0)
    except InputError as error:
        text = "\n".join(cut_line(line) for line in str(error).splitlines())
        print(f"{name}: error: {text}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`primaldual ... | head`): not an error of ours, and no traceback.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Terminated:
        print(f"{name}: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if _is_the_command():
            from primaldual.backends.processes import reap_resource_tracker

            reap_resource_tracker()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
