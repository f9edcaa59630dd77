"""examples/cache_ablation.py, which measures what each of OASiS-LR's caches buys (docs/measurements.md, "What
each cache buys"): its edits still switch off what they name, and every variant is the same run, bit for bit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from primaldual.core.files import save_instance
from primaldual.core.generate import generate

ROOT = Path(__file__).resolve().parents[2]


def test_every_variant_edits_the_code_it_names_exactly_once(example):
    script = example("cache_ablation")
    for name, edits in script.VARIANTS.items():
        for file, text, replacement in edits:
            source = (ROOT / file).read_text()
            assert source.count(text) == 1, (name, file)
            assert script.edited(source, name, file, text, replacement) != source


def test_an_edit_that_no_longer_applies_stops_the_script(example):
    with pytest.raises(SystemExit, match="matches 0 times"):
        example("cache_ablation").edited("x = 1\n", "gone", "f.py", "y = 2\n", "")


@pytest.mark.slow
def test_every_variant_runs_the_same_schedule_as_the_tree(tmp_path, example):
    """A cache switched off changes the time, never a float: each variant's OASiS-LR utility is the tree's,
    bit for bit, under restart costs too (the script itself stops on a difference)."""
    path = tmp_path / "small.json"
    save_instance(generate("small", 11, jobs=12), path)
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "cache_ablation.py"), str(path), "--reps", "1",
                          "--restart-cost", "0.1"], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == len(example("cache_ablation").VARIANTS)
