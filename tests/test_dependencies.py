"""Every required dependency earns its place: each name under ``[project] dependencies`` in pyproject.toml is
imported by some module of ``primaldual/`` or ``models/`` (parsed with ``ast``, nothing executed)."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def required() -> list[str]:
    """The distribution names of pyproject's required dependencies, without versions or extras."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0] for spec in data["project"]["dependencies"]]


def top_level_imports(folders) -> set[str]:
    """The first component of every absolute import in the ``.py`` files under ``folders``."""
    found = set()
    for folder in folders:
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def unused(distributions, imported, import_names) -> list[str]:
    """The distributions none of whose import names (``import_names``: import name -> distributions, as
    :func:`importlib.metadata.packages_distributions` gives; else the name itself) is in ``imported``."""
    provided = {_normal(name): {_normal(name)} for name in imported}
    for module, owners in import_names.items():
        if module in imported:
            for owner in owners:
                provided.setdefault(_normal(owner), set()).add(module)
    return [name for name in distributions if _normal(name) not in provided]


def test_every_required_dependency_is_imported_by_the_package():
    imported = top_level_imports([ROOT / "primaldual", ROOT / "models"])
    assert unused(required(), imported, metadata.packages_distributions()) == []


def test_an_unimported_dependency_is_found():
    # scikit-learn is imported as sklearn (the mapping), networkx by nothing.
    names = {"sklearn": ["scikit-learn"], "yaml": ["PyYAML"]}
    assert unused(["scikit-learn", "networkx", "numpy", "PyYAML"], {"sklearn", "numpy"}, names) == ["networkx",
                                                                                                  "PyYAML"]


def test_the_dependencies_are_read_from_pyproject():
    assert {"pyomo", "highspy", "numpy", "scikit-learn"} <= set(required())
