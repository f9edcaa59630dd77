"""Packaging: every subpackage is listed, and a non-editable wheel installs primaldual.models (not 'models')."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _listed_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def test_every_subpackage_is_listed_in_pyproject():
    found = {"primaldual.models"}
    for init in (ROOT / "primaldual").rglob("__init__.py"):
        found.add(".".join(init.parent.relative_to(ROOT).parts))
    modules_without_init = [
        str(path.relative_to(ROOT)) for path in (ROOT / "primaldual").rglob("*.py")
        if not (path.parent / "__init__.py").exists()
    ]
    assert not modules_without_init, f"modules in folders without __init__.py: {modules_without_init}"
    assert found == _listed_packages()


def test_wheel_installs_models_as_a_subpackage(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("primaldual-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "primaldual/models/__init__.py" in names
    assert "primaldual/py.typed" in names  # PEP 561: type checkers read the package's own hints
    assert not [n for n in names if n.startswith("models/")], "a generic top-level 'models' package is installed"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = subprocess.run(
        [sys.executable, "-c",
         "import primaldual, primaldual.models, primaldual.cli; print(primaldual.models.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip().startswith(str(site))


def test_python_dash_m_primaldual_is_the_command_line():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "primaldual", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: primaldual ") and done.stderr == ""
