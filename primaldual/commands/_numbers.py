"""The argparse side of :mod:`primaldual.core.numerals`: every ``int``/``float`` flag of every command reads its
value in ASCII decimal only (docs/input-ranges.md, "Numbers"), or is refused in one line."""

from __future__ import annotations

import argparse

from primaldual.core.numerals import echo, read_integer, read_number


def flag_number(text: str) -> float:
    """argparse ``type`` of every number flag: :func:`read_number` or a one-line refusal."""
    value = read_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be an ASCII decimal number (like 12, 0.5 or 1e-3), got {echo(text)}")
    return value


def flag_integer(text: str) -> int:
    """argparse ``type`` of every integer flag: :func:`read_integer` or a one-line refusal."""
    value = read_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be an integer in ASCII decimal digits, got {echo(text)}")
    return value


# What each reader returns, for code that reads a flag's Python type from its argparse action (_config.py).
flag_number.reads = float  # type: ignore[attr-defined]
flag_integer.reads = int  # type: ignore[attr-defined]


def use_ascii_numbers(parser: argparse.ArgumentParser) -> None:
    """Give every ``type=int``/``type=float`` argument of ``parser`` and its subcommands the readers above (one
    rule for every flag, whichever module declared it)."""
    for action in parser._actions:
        if action.type is float:
            action.type = flag_number
        elif action.type is int:
            action.type = flag_integer
        if isinstance(action, argparse._SubParsersAction):
            for command in set(action.choices.values()):
                use_ascii_numbers(command)
