"""The offline methods are one table: every method name has one entry, and solve_offline dispatches on none."""

import pickle
import re
from pathlib import Path

from primaldual.offline.method_table import METHOD_TABLE
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
