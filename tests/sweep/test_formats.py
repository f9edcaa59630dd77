"""``docs/formats.md`` is true: every key of each documented example is in the real output of its command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from primaldual.cli import main

from .conftest import ROOT

DOC = ROOT / "docs" / "formats.md"
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```json\n(.*?)\n```", re.S)


def _examples() -> dict[str, object]:
    return {name: json.loads(text) for name, text in EXAMPLE.findall(DOC.read_text(encoding="utf-8"))}


def missing_keys(documented, actual, where: str = "") -> list[str]:
    """Keys of ``documented`` (recursively; a list's first element) that ``actual`` lacks."""
    out = []
    if isinstance(documented, dict):
        if not isinstance(actual, dict):
            return [f"{where or '.'}: an object in the docs, {type(actual).__name__} in the output"]
        for key, value in documented.items():
            if key not in actual:
                out.append(f"{where}.{key}")
            else:
                out += missing_keys(value, actual[key], f"{where}.{key}")
    elif isinstance(documented, list) and documented and isinstance(documented[0], (dict, list)) and actual:
        out += missing_keys(documented[0], actual[0], f"{where}[0]")
    return out


def test_the_example_checker_can_fail():
    assert missing_keys({"a": {"b": 1}, "c": [{"d": 1}]}, {"a": {}, "c": [{}]}) == [".a.b", ".c[0].d"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    instance, schedule, records = folder / "i.json", folder / "s.json", folder / "r.jsonl"
    out: dict[str, object] = {}

    def run_json(name, *argv):
        import contextlib
        import io

        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(list(argv)) == 0
        out[name] = json.loads(buffer.getvalue())

    assert main(["generate", "--preset", "tiny", "--seed", "1", "-o", str(instance)]) == 0
    run_json("run", "run", str(instance), "--scheduler", "oasis", "-o", str(schedule), "--json")
    run_json("solve", "solve", str(instance), "--json")
    run_json("verify", "verify", str(instance), str(schedule), "--json")
    run_json("compare", "compare", "--preset", "tiny", "--seed", "1", "--schedulers", "oasis,fifo", "--opt", "--json")
    run_json("ratio", "ratio", "--preset", "tiny", "--seed", "1", "--instances", "1", "--schedulers", "oasis,fifo",
             "--workers", "1", "--no-progress", "--out", str(records), "--json")
    out["instance"] = json.loads(instance.read_text())
    out["schedule"] = json.loads(schedule.read_text())
    out["record"] = json.loads(records.read_text().splitlines()[0])
    return out


@pytest.mark.parametrize("name", ["instance", "schedule", "solve", "run", "verify", "compare", "record", "ratio"])
def test_every_documented_key_is_in_the_output(outputs, name):
    examples = _examples()
    assert name in examples, f"docs/formats.md has no example of {name}"
    assert missing_keys(examples[name], outputs[name]) == []


def test_every_file_format_has_format_and_version():
    examples = _examples()
    for name in ("instance", "schedule", "record", "compare"):
        assert {"format", "version"} <= set(examples[name]), name
