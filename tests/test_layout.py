"""Layout rules of issue 13: no oversized module, and no docstring or comment citing a document that is not here.

Every ``.py`` file under ``primaldual/`` and ``models/`` has at most :data:`MAX_LINES` lines, and every ``*.md``
name in one of them resolves to a file of the repository: ``proofs/X.md`` and ``docs/X.md`` as written, a bare
``X.md`` in ``docs/`` or ``proofs/`` (or at the top level, like ``README.md``). Names of files the code writes
(:data:`GENERATED`) are not documents and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("primaldual", "models")
MAX_LINES = 450
#: Markdown files the code writes at run time (``reproduce``'s report), not documents of the repository.
GENERATED = {"summary.md"}
MD_NAME = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _resolves(name: str) -> bool:
    if Path(name).name in GENERATED:
        return True
    if "/" in name:
        return (ROOT / name).is_file()
    return any((ROOT / folder / name).is_file() for folder in ("docs", "proofs", "."))


def test_sources_are_found():
    assert len(_sources()) > 20


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path: Path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES}): split it by job"


def test_cited_documents_exist():
    missing = []
    for path in _sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in MD_NAME.findall(line):
                if not _resolves(name):
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert not missing, "documents cited but not in the repository:\n" + "\n".join(missing)


def test_resolver_rejects_missing_documents():
    assert _resolves("proofs/oasis.md") and _resolves("docs/papers.md") and _resolves("oasis.md")
    assert not _resolves("design.md") and not _resolves("papers/lbbsp.md") and not _resolves("lbbsp.md")
