"""The layers of ``docs/architecture.md``, read from the source: no import cycle, no import against the order.

Every import of every module of ``primaldual/`` and ``models/`` is parsed (``ast``; module-level and inside
functions, ``TYPE_CHECKING`` blocks included, since a cycle there is still a cycle of meaning), nothing is
executed. A module belongs to a *room*: its folder directly under ``primaldual/`` (``models/`` is one room);
rooms are ranked by :data:`LAYERS`, and a module may import only from its own room or a room ranked strictly
below. Inside a room, the modules must not import each other in a circle either. The same parse holds functions
to a screen and docstrings to the contract: none longer than its function's body unless it states a formula.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Bottom to top, as ``docs/architecture.md``'s table lists them.
LAYERS = ("core", "traces", "backends", "models", "dual", "simulation", "oasis", "baselines", "offline", "evaluation",
          "lbbsp", "sweep", "views", "reproduce", "commands", "cli")
#: The front (``primaldual/__init__.py``, ``__main__.py``) may name anything; it only re-exports.
FRONT = {"primaldual", "primaldual.__main__"}
#: What may stay flat in ``primaldual/``.
FLAT = {"__init__.py", "__main__.py", "cli.py"}
#: Rooms the offline solve must never reach: it judges the online schedulers, so it may not depend on them.
NOT_BELOW_OFFLINE = ("simulation", "oasis", "baselines", "evaluation")
#: The longest chain of rooms importing one another, bottom to top (``core`` is floor 1, ``cli`` floor 10).
MAX_FLOORS = 10
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 400
#: Where the layers are written down for people.
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "models":
        parts = ["primaldual", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def sources() -> dict[str, Path]:
    files = sorted((ROOT / "primaldual").rglob("*.py")) + sorted((ROOT / "models").rglob("*.py"))
    return {module_name(p): p for p in files}


MODULES = sources()


def _resolve(target: str) -> str | None:
    """The package module ``target`` names (``a.b.c`` may be the attribute ``c`` of module ``a.b``)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def imports(module: str, source: str | None = None) -> set[str]:
    """The package modules ``module`` imports, anywhere in its source (``source``: its text, if not on disk)."""
    path = MODULES.get(module, Path(module.replace(".", "/") + ".py"))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source if source is not None else path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target.startswith("models"):
                target = "primaldual." + target
            resolved = _resolve(target) if target.startswith("primaldual") else None
            if resolved and resolved != module and not (module.startswith(resolved + ".") and
                                                        MODULES[resolved].name == "__init__.py"):
                found.add(resolved)
    return found


GRAPH = {module: imports(module) for module in MODULES}


def room(module: str) -> str:
    parts = module.split(".")
    return "front" if module in FRONT else parts[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, groups, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]; counter[0] += 1
                    stack.append(child); on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop(); on_stack.discard(member); group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for module, targets in sorted(graph.items()):
        if module in FRONT:
            continue
        for target in sorted(targets):
            if target in FRONT:
                wrong.append(f"{module} imports the front {target}")
            elif room(target) != room(module) and rank[room(target)] > rank[room(module)]:
                wrong.append(f"{module} ({room(module)}) imports {target} ({room(target)})")
    return wrong


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports no other room, else one above the highest room it imports."""
    below: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module in FRONT:
            continue
        below.setdefault(room(module), set()).update(
            room(t) for t in targets if t not in FRONT and room(t) != room(module))
    found: dict[str, int] = {}

    def floor(name: str) -> int:
        if name not in found:
            found[name] = 1 + max((floor(other) for other in below.get(name, ())), default=0)
        return found[name]

    return {name: floor(name) for name in below}


def test_no_more_floors_than_today():
    assert max(floors(GRAPH).values()) <= MAX_FLOORS


def test_floors_count_the_longest_chain():
    graph = {"primaldual.core.a": set(), "primaldual.dual.b": {"primaldual.core.a"},
             "primaldual.oasis.c": {"primaldual.dual.b", "primaldual.core.a"}, "primaldual.traces.d": set()}
    assert floors(graph) == {"core": 1, "dual": 2, "oasis": 3, "traces": 1}


def test_every_room_has_a_layer():
    assert {room(m) for m in MODULES if m not in FRONT} <= set(LAYERS)


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_no_import_against_the_layers():
    assert upward_imports(GRAPH) == []


def test_the_offline_solve_imports_no_scheduler_and_no_simulator():
    offline = [m for m in MODULES if room(m) in ("offline", "backends", "models")]
    assert offline
    reached = {t for m in offline for t in GRAPH[m] if room(t) in NOT_BELOW_OFFLINE}
    assert reached == set()


def test_only_the_front_and_the_entry_point_are_flat():
    flat = {p.name for p in (ROOT / "primaldual").glob("*.py")}
    assert flat <= FLAT


def _function_lengths(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines -= first.end_lineno - first.lineno + 1
            yield f"{path.relative_to(ROOT)}:{node.lineno}:{node.name}", lines


def test_functions_fit_on_a_screen():
    long = {where: n for path in MODULES.values() for where, n in _function_lengths(path) if n > MAX_FUNCTION_LINES}
    assert long == {}


def test_modules_are_small():
    big = {str(p.relative_to(ROOT)): n for p in MODULES.values()
           if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES}
    assert big == {}


#: Inside a docstring, what states a formula: LaTeX (``$`` or ``:math:``) or an equation in double backticks
#: (`` ``V_i = ceil(W_i)`` ``: a spaced ``=``, not ``==``, ``<=`` or ``>=``).
FORMULA = re.compile(r"\$|:math:|``[^`]*\s=\s[^`]*``")


def _functions(node: ast.AST, prefix: str):
    """Every function under ``node`` with its qualified name (``module.Class.method``, ``module.outer.inner``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}.{child.name}"
            if not isinstance(child, ast.ClassDef):
                yield name, child
            yield from _functions(child, name)
        else:
            yield from _functions(child, prefix)


def docstrings_longer_than_bodies(module: str, source: str) -> dict[str, tuple[int, int]]:
    """``{qualified name: (docstring lines, body lines)}`` of the functions of ``source`` whose docstring is longer
    than the rest of their body and states no formula (:data:`FORMULA`). A function whose body is its docstring
    alone (an abstract or protocol method) is its contract, and is not counted."""
    long = {}
    for name, function in _functions(ast.parse(source), module):
        first, rest = function.body[0], function.body[1:]
        docstring = ast.get_docstring(function, clean=False)
        if docstring is None or not rest or FORMULA.search(docstring):
            continue
        lines, body = first.end_lineno - first.lineno + 1, rest[-1].end_lineno - rest[0].lineno + 1
        if lines > body:
            long[name] = (lines, body)
    return long


def test_docstrings_are_not_longer_than_their_bodies():
    """Issue 46: a docstring states the contract; measurements live in docs/measurements.md, proofs in proofs/."""
    long = {name: n for module, path in MODULES.items()
            for name, n in docstrings_longer_than_bodies(module, path.read_text(encoding="utf-8")).items()}
    assert long == {}


def test_the_architecture_document_lists_the_layers_in_this_order():
    rows = re.findall(r"^\| *(\d+) *\| *`([\w/]+?)/?` *\|", ARCHITECTURE.read_text(encoding="utf-8"), re.M)
    assert [name for _, name in rows] == list(LAYERS)


# -------------------------------------------------------------------- the checks themselves can fail


def test_the_cycle_finder_finds_a_cycle_and_only_that():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_an_upward_import_is_reported():
    graph = {"primaldual.core.verify": {"primaldual.oasis.engine"}, "primaldual.oasis.engine": {"primaldual.core.verify"}}
    assert upward_imports(graph) == ["primaldual.core.verify (core) imports primaldual.oasis.engine (oasis)"]


@pytest.mark.parametrize("source, expected", [
    ("def f():\n    from primaldual.oasis.engine import run_oasis\n", {"primaldual.oasis.engine"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from primaldual.core import verify\n",
     {"primaldual.core.verify"}),
    ("from primaldual.models.offline import build_offline_model\n", {"primaldual.models.offline"}),
])
def test_function_level_and_type_checking_imports_are_seen(source, expected):
    assert imports("primaldual.core._probe", source) == expected


@pytest.mark.parametrize("source, expected", [
    ('def f(x):\n    """Two lines\n    of docstring."""\n    return x\n', {"m.f": (2, 1)}),
    ('class C:\n    def f(self):\n        """One line."""\n        return 1\n', {}),
    ('def f(x):\n    """``y = 2 x``, a formula,\n    may be longer."""\n    return 2 * x\n', {}),
    ('def f(x):\n    """``x == 1``, a test,\n    is no formula."""\n    return x == 1\n', {"m.f": (2, 1)}),
    ('class P:\n    def f(self):\n        """Abstract: the docstring is the body."""\n', {}),
])
def test_a_docstring_longer_than_its_body_is_reported(source, expected):
    assert docstrings_longer_than_bodies("m", source) == expected
