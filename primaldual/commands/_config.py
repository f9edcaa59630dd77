"""Experiment files: a TOML file whose keys are a command's flag names, equivalent to giving the flags.

``primaldual ratio --config exp.toml`` with::

    preset = "tiny"
    seed = 3
    instances = 3
    schedulers = ["oasis", "fifo"]
    time-limit = 30          # or time_limit; every flag of the command, without its dashes
    [param.fifo]             # scheduler parameters, as --param fifo.workers=2
    workers = 2

Each value is checked like the flag (its type, its choices); an unknown key or a bad value is refused naming
the key. :func:`dump_config` writes the resolved configuration back in the same form, which the sweep stores
beside its results so that a run can be repeated exactly.
"""

from __future__ import annotations

import argparse
import math
import tomllib
from pathlib import Path
from typing import Any

from primaldual.core.errors import InputError

#: Flags that are not experiment settings (where to read the file itself, how to print).
NOT_SETTINGS = ("config", "json", "help")
#: Flags of comma-separated names that a file may also give as a TOML list of strings: what they name.
LISTS = {"schedulers": "scheduler names", "sections": "section names"}


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    out = {}
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and option[2:] not in NOT_SETTINGS:
                out[option[2:]] = action
    return out


def _check(key: str, action: argparse.Action, value: Any) -> Any:
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise InputError(f"{key}: must be true or false, got {value!r}")
        return value
    if key in LISTS and isinstance(value, list):
        if not value or not all(isinstance(v, str) and v for v in value):
            raise InputError(f"{key}: must be a list of {LISTS[key]}, got {value!r}")
        return ",".join(value)
    kind = getattr(action.type, "reads", action.type) or str  # the ASCII readers say which type they return
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InputError(f"{key}: must be {'a number' if kind is float else kind.__name__}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise InputError(f"{key}: must be a finite number, got {value!r}")
    if action.choices is not None and value not in action.choices:
        raise InputError(f"{key}: must be one of {', '.join(map(str, action.choices))}, got {value!r}")
    return value


def _parameters(table: Any) -> list[str]:
    """``[param.NAME]`` tables as ``--param NAME.KEY=VALUE`` strings (values as JSON, as on the command line)."""
    import json

    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise InputError("param: must be tables [param.SCHEDULER] of KEY = VALUE")
    for name, values in table.items():
        for key, value in values.items():
            _refuse_dates(f"param.{name}.{key}", value)
    return [f"{name}.{key}={json.dumps(value)}" for name, values in table.items() for key, value in values.items()]


def _refuse_dates(where: str, value: Any) -> None:
    """A TOML date, time or datetime (anywhere in a list or table) is no parameter value: refused in one line,
    like the same value of a flag (json.dumps raised a traceback on it)."""
    import datetime

    if isinstance(value, (datetime.date, datetime.time)):  # a datetime is a date
        raise InputError(f"{where}: must be a number, true or false, a string or a list, got the TOML "
                         f"{type(value).__name__} {value.isoformat()}")
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _refuse_dates(where, item)


def load_config(path: str | Path, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The settings of the experiment file ``path`` as ``{dest: value}`` of ``parser``'s arguments."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise InputError(f"--config: no such file: {path}") from None
    except IsADirectoryError:
        raise InputError(f"--config: {path} is a folder, expected a TOML file") from None
    except OSError as error:
        raise InputError(f"--config: cannot read {path}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"--config: {path} is not valid TOML: {error}") from None
    actions = _actions(parser)
    out: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = raw_key.replace("_", "-")
        if key == "param" and "param" in actions:
            out["param"] = _parameters(value)
            continue
        if key not in actions:
            from primaldual.core.strict_json import close_match

            names = sorted(k for k in actions if k != "param") + ["param"]
            raise InputError(f"{raw_key}: unknown key in {path}{close_match(key, names)} (known: {', '.join(names)})")
        out[actions[key].dest] = _check(raw_key, actions[key], value)
    return out


def apply_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``args`` with the experiment file's settings wherever a flag was left at its default."""
    if not getattr(args, "config", None):
        return args
    for dest, value in load_config(args.config, parser).items():
        if getattr(args, dest) == parser.get_default(dest):
            setattr(args, dest, value)
    return args


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    import json

    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def dump_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The resolved settings of ``args`` as an experiment file (``None`` values are left out)."""
    from primaldual.simulation.scheduler import parse_value  # the one rule the commands read --param values by

    lines, params = [], []
    for key, action in sorted(_actions(parser).items()):
        value = getattr(args, action.dest, None)
        if key == "param":
            params = value or []
        elif value is not None:
            lines.append(f"{key} = {_toml_value(value)}")
    tables: dict[str, list[str]] = {}
    for text in params:
        name_key, _, value = text.partition("=")
        name, _, key = name_key.partition(".")
        # A bare word (rule=budget) is a string to the commands, so it must be one here too (it was
        # parsed as JSON and raised a traceback).
        parsed = parse_value(value.strip())
        if parsed is None:  # TOML has no null; a comment keeps the file honest, and the value was the default's
            tables.setdefault(name, []).append(f"# {key.strip()} = null (given on the command line; TOML has no null)")
        else:
            tables.setdefault(name, []).append(f"{key.strip()} = {_toml_value(parsed)}")
    for name, entries in tables.items():
        lines += ["", f"[param.{name}]", *entries]
    return "\n".join(lines) + "\n"


__all__ = ["apply_config", "dump_config", "load_config"]
