"""``primaldual solve --method`` (issue 11, item 5): the JSON keys, the aliases, and bad input (exit 2)."""

import json

import pytest

from offline_helpers import run
from primaldual.core.files import load_instance, load_schedule, save_instance
from primaldual.core.generate import generate
from primaldual.core.verify import verify


@pytest.fixture()
def tiny_file(tmp_path):
    path = tmp_path / "tiny.json"
    save_instance(generate("tiny", 7), path)
    return path


def test_method_cg_json_keys_and_a_verified_schedule(capsys, tmp_path, tiny_file):
    output = tmp_path / "cg.json"
    code, out, err = run(capsys, "solve", tiny_file, "--method", "cg", "-o", output, "--json")
    assert code == 0, err
    data = json.loads(out)  # one JSON object on stdout, nothing else (HiGHS's banner is kept off it)
    assert data["method"] == "cg" and data["utility"] == data["objective"]
    for key in ("status", "objective", "utility", "bound", "gap", "method", "details"):
        assert key in data
    instance = load_instance(tiny_file)
    report = verify(instance, load_schedule(output, instance))
    assert report.feasible and report.utility == pytest.approx(data["objective"])
    code, out, _ = run(capsys, "solve", tiny_file, "--method", "ilp", "--json")
    assert data["bound"] >= json.loads(out)["objective"] - 1e-9


def test_method_cg_names_the_source_of_each_end(capsys, tiny_file):
    # Issue 63, item 6: the interval's lower end is a named schedule's, the upper end a named bound's.
    code, out, err = run(capsys, "solve", tiny_file, "--method", "cg", "--json")
    details = json.loads(out)["details"]
    assert code == 0, err
    assert details["bound_source"] != "none" and details["round_bounds"]
    assert min(details["round_bounds"]) >= json.loads(out)["bound"] - 1e-9
    assert details["incumbent_origin"].startswith(("online:", "greedy", "price-and-branch"))
    code, out, _ = run(capsys, "solve", tiny_file, "--method", "cg")
    assert f"lower end from {details['incumbent_origin']}; upper end from {details['bound_source']}" in out


def test_auto_is_the_default_and_says_what_it_used(capsys, tiny_file):
    code, out, _ = run(capsys, "solve", tiny_file, "--json")
    assert code == 0 and json.loads(out)["method"] == "ilp"


@pytest.mark.parametrize("alias, method", [("--relax", "lp"), ("--pooled", "pooled")])
def test_relax_and_pooled_are_aliases(capsys, tiny_file, alias, method):
    code, out, _ = run(capsys, "solve", tiny_file, alias, "--json")
    by_alias = json.loads(out)
    code2, out2, _ = run(capsys, "solve", tiny_file, "--method", method, "--json")
    by_name = json.loads(out2)
    assert code == code2 == 0 and by_alias["method"] == by_name["method"] == method
    assert by_alias["bound"] == pytest.approx(by_name["bound"])
    assert by_alias["utility"] is None


@pytest.mark.parametrize("argv, flag", [
    (("--method", "cg", "--relax"), "--method"),
    (("--method", "simplex"), "--method"),
    (("--memory-limit", "0"), "--memory-limit"),
    (("--memory-limit", "nan"), "--memory-limit"),
    (("--method", "lp", "-o", "x.json"), "-o"),
])
def test_bad_method_arguments_exit_2(capsys, tiny_file, argv, flag):
    code, _, err = run(capsys, "solve", tiny_file, *argv)
    assert code == 2 and flag in err and "Traceback" not in err


def test_memory_limit_flag_reports_its_status(capsys, tiny_file):
    code, out, _ = run(capsys, "solve", tiny_file, "--memory-limit", "0.0625", "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "memory_limit" and "memory limit" in data["message"]
