"""Layout rules of issue 13: no oversized module, and no docstring or comment citing a file that is not here.

Every ``.py`` file under ``primaldual/`` and ``models/`` has at most :data:`MAX_LINES` lines. In those files and
in the documents of ``docs/`` and ``proofs/`` (:func:`_citing_files`):

* every ``*.md`` name resolves to a file of the repository: ``proofs/X.md`` and ``docs/X.md`` as written, a bare
  ``X.md`` in ``docs/`` or ``proofs/`` (or at the top level, like ``README.md``). Names of files the code writes
  (:data:`GENERATED`) are not documents and are skipped;
* every ``*.py`` name resolves: a path from the top, from ``primaldual/`` or from the citing file's folder, or a
  bare name that some file of the repository has;
* every section a citation names exists: ``X.md section 7a`` (or ``§7a``) needs a heading of ``X.md`` numbered
  ``7a``, and ``docs/X.md, Title`` / ``proofs/X.md, Title`` a heading of that file that starts with ``Title``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("primaldual", "models")
MAX_LINES = 450
#: Markdown files the code writes at run time (``reproduce``'s report), not documents of the repository.
GENERATED = {"summary.md", "figures.md"}
MD_NAME = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
PY_NAME = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.py)\b")
#: A numbered section after a document's name: ``proofs/oasis.md section 7``, ``oasis.md §4.2``.
SECTION_NUMBER = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.md)`?,? (?:section|§) ?([A-Z]?\d+[a-z]?(?:\.\d+)*)")
#: A titled section after a document of docs/ or proofs/: ``docs/architecture.md, Model conventions``.
SECTION_TITLE = re.compile(r"((?:docs|proofs)/[\w.-]+\.md)`?, \"?([A-Z][\w-]*(?: [a-z][\w-]*)*)")
HEADING = re.compile(r"^#+ +(.*?) *$", re.MULTILINE)


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _citing_files() -> list[Path]:
    return _sources() + sorted(p for folder in ("docs", "proofs") for p in (ROOT / folder).glob("*.md"))


def _repository_names() -> set[str]:
    """Names of the files of the repository (hidden folders, such as a virtual environment, left out)."""
    folders = [p for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "build", "dist"))]
    return {p.name for folder in folders for p in folder.rglob("*") if p.is_file()} | {p.name for p in ROOT.iterdir()}


def _py_resolves(name: str, citing: Path, names: set[str]) -> bool:
    if "/" not in name:
        return name in names
    return any((base / name).is_file() for base in (ROOT, ROOT / "primaldual", citing.parent))


def _document(name: str) -> Path | None:
    if "/" in name:
        return ROOT / name if (ROOT / name).is_file() else None
    return next((ROOT / f / name for f in ("docs", "proofs", ".") if (ROOT / f / name).is_file()), None)


def _headings(document: Path) -> list[str]:
    return HEADING.findall(document.read_text(encoding="utf-8"))


def _section_problems(line: str) -> list[str]:
    """The sections ``line`` cites that its documents do not have."""
    problems = []
    for name, number in SECTION_NUMBER.findall(line):
        document = _document(name)
        if document and not any(re.match(rf"{re.escape(number)}[. ]", h) for h in _headings(document)):
            problems.append(f"{name} section {number}")
    for name, title in SECTION_TITLE.findall(line):
        document = _document(name)
        if document and not any(h.startswith(title) for h in _headings(document)):
            problems.append(f"{name}, {title}")
    return problems


def _resolves(name: str, citing: Path = ROOT / "README.md") -> bool:
    if Path(name).name in GENERATED:
        return True
    if "/" in name:
        return (ROOT / name).is_file() or (citing.parent / name).is_file()
    return any((ROOT / folder / name).is_file() for folder in ("docs", "proofs", "."))


def test_sources_are_found():
    assert len(_sources()) > 20


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path: Path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES}): split it by job"


def test_cited_files_and_sections_exist():
    names = _repository_names()
    missing = []
    for path in _citing_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = [name for name in MD_NAME.findall(line) if not _resolves(name, path)]
            found += [name for name in PY_NAME.findall(line) if not _py_resolves(name, path, names)]
            found += _section_problems(line)
            missing += [f"{path.relative_to(ROOT)}:{number}: {name}" for name in found]
    assert not missing, "files or sections cited but not in the repository:\n" + "\n".join(missing)


def test_resolver_rejects_missing_documents():
    assert _resolves("proofs/oasis.md") and _resolves("docs/papers.md") and _resolves("oasis.md")
    assert not _resolves("design.md") and not _resolves("papers/lbbsp.md") and not _resolves("nowhere.md")


def test_py_and_section_resolvers_reject_what_is_missing():
    names = _repository_names()
    here = ROOT / "primaldual" / "oasis.py"
    assert _py_resolves("commands/_common.py", here, names) and _py_resolves("models/offline.py", here, names)
    assert _py_resolves("oasis.py", here, names)
    assert not _py_resolves("proto.py", here, names) and not _py_resolves("commands/oasis.py", here, names)
    assert _section_problems("(proofs/oasis.md section 7a; docs/architecture.md, Model conventions)") == []
    assert _section_problems("oasis.md section 4.2") == ["oasis.md section 4.2"]
    assert _section_problems("`docs/papers.md`, Dorm") == ["docs/papers.md, Dorm"]
    assert _section_problems('`docs/architecture.md`, "One OPT interval"') == []
    assert _section_problems("`proofs/oasis.md` section 9") == ["proofs/oasis.md section 9"]
    assert _resolves("../proofs/oasis.md", ROOT / "docs" / "papers.md") and not _resolves("../proofs/oasis.md")
