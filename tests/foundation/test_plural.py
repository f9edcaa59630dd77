"""core/plural.py: the singular exactly for a count of one, in counted nouns and in [plural|singular] choices."""

from __future__ import annotations

import pytest

from primaldual.core.plural import by_count, counted


@pytest.mark.parametrize("count, expected", [(0, "0 jobs"), (1, "1 job"), (2, "2 jobs"), (10**6, "1000000 jobs")])
def test_counted_takes_the_singular_only_for_one(count, expected):
    assert counted(count, "job") == expected


def test_counted_takes_an_irregular_plural():
    assert counted(1, "PS server") == "1 PS server"
    assert counted(3, "child", "children") == "3 children"


@pytest.mark.parametrize("count, expected", [(0, "jobs arrive and are left out"), (1, "job arrives and is left out"),
                                             (2, "jobs arrive and are left out")])
def test_by_count_fills_every_choice(count, expected):
    assert by_count(count, "[jobs arrive|job arrives] and [are|is] left out") == expected


def test_by_count_leaves_text_without_choices_and_format_fields_alone():
    assert by_count(1, "for more than the cluster's {gpus} GPUs") == "for more than the cluster's {gpus} GPUs"
