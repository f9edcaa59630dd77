"""Every notebook in notebooks/ executes top to bottom without error (with its committed small settings).

The notebooks are executed in memory with nbclient and the ``python3`` kernel; the committed files are not
modified. Each cell has a timeout, so a notebook that hangs fails instead of stalling CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 600


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"competitive_ratio", "oasis_vs_baselines", "lbbsp"}


@pytest.mark.slow  # 2.5 min for the four; test_committed_with_outputs stays in the fast tier
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    errors = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    images = sum(1 for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images >= 2, "each notebook draws its figures"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_with_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.get("execution_count") for cell in code), "execute and commit with outputs"
    assert any("image/png" in o.get("data", {}) for cell in code for o in cell.get("outputs", []))
