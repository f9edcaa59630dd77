"""The offline methods are one module: every method name has one entry in the table, solve_offline dispatches on none,
and no module but the options and this one compares a method name."""

import pickle
import re
from pathlib import Path

from primaldual.offline.methods import METHOD_TABLE
from primaldual.offline.options import METHODS


def test_every_method_but_auto_has_one_entry_under_its_name():
    assert set(METHOD_TABLE) | {"auto"} == set(METHODS)
    for name, method in METHOD_TABLE.items():
        assert method.name == name


def test_the_work_of_every_method_pickles_by_name_for_the_child():
    for method in METHOD_TABLE.values():
        assert pickle.loads(pickle.dumps(method.run)) is method.run
        assert pickle.loads(pickle.dumps(method.prepare)) is method.prepare


def test_only_relaxations_have_no_schedule():
    assert {name for name, method in METHOD_TABLE.items() if method.relaxation} == {"lp", "pooled"}


def test_solve_offline_reads_the_table_rather_than_comparing_method_names():
    source = (Path(__file__).resolve().parents[2] / "primaldual" / "offline" / "solve.py").read_text()
    assert not re.search(r"method\s*[!=]=", source)


def test_no_module_but_the_options_and_the_table_spells_a_method_name_in_a_comparison():
    # Issue 53 item 12: the command line, the resolution of options and the evaluation ask the table's predicates.
    package = Path(__file__).resolve().parents[2] / "primaldual"
    names = "|".join(re.escape(name) for name in METHODS)
    spelled = re.compile(rf"""(==|!=|\bin\s*\()\s*["']({names})["']""")
    found = [f"{path.relative_to(package)}:{number}"
             for path in sorted(package.rglob("*.py")) if path.name not in ("options.py", "methods.py")
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if "method" in line and spelled.search(line)]
    assert found == []


def test_the_predicates_say_what_each_method_does():
    from primaldual.offline.methods import (AUTO_LARGE, AUTO_SMALL, always_seeded, has_one_model,
                                                 is_relaxation, may_be_ilp, plans_large_ilp)

    assert [name for name in METHODS if is_relaxation(name)] == ["lp", "pooled"]
    assert [name for name in METHODS if not has_one_model(name)] == ["cg"]
    assert [name for name in METHODS if may_be_ilp(name)] == ["ilp", "auto"]
    assert [name for name in METHOD_TABLE if plans_large_ilp(name)] == ["ilp"]
    assert [name for name in METHOD_TABLE if always_seeded(name)] == ["cg"]
    assert (AUTO_SMALL, AUTO_LARGE) == ("ilp", "cg")


def test_the_methods_module_loads_no_solver_backend():
    # The command line reads the methods before any solve: it must not pay for Pyomo.
    import subprocess
    import sys

    code = "import sys, primaldual.offline.methods; print('pyomo' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
