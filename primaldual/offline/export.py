"""Write the offline model (1)-(13) as an MPS or CPLEX-LP file, for re-solving it elsewhere."""

from __future__ import annotations

from pathlib import Path

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.output import check_output, replacing
from primaldual.models.offline import FORMULATIONS, build_offline_model, model_size

#: file extension -> Pyomo writer (``lp`` is the CPLEX LP format that HiGHS, CBC, GLPK and Gurobi read)
EXPORT_FORMATS = {".mps": "mps", ".lp": "cpxlp"}


def write_model(
    instance: Instance, path: str | Path, relax: bool = False, formulation: str = "strong", pooled: bool = False
) -> dict:
    """Write the model as MPS or CPLEX-LP (chosen by the extension) for re-solving elsewhere.

    Variable and constraint names are Pyomo's symbolic names, e.g. ``workers(3_12_0)`` is y_{i=3,h=0}(t=12).
    Returns ``{"path", "format", "n_variables", "n_constraints"}`` (format ``"mps"`` or ``"lp"``).
    """
    path = Path(path)
    file_format = EXPORT_FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise InputError(f"--write-mps: the file name must end in .mps or .lp, got {str(path)!r}")
    check_output(path, "--write-mps")  # the package's output rule: parents created, unwritable refused
    if formulation not in FORMULATIONS:
        raise InputError(f"--formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    model = build_offline_model(instance, relax=relax, formulation=formulation, pooled=pooled)
    n_variables, n_constraints = model_size(model)
    with replacing(path, "--write-mps") as temporary:
        model.write(str(temporary), format=file_format, io_options={"symbolic_solver_labels": True})
    return {"path": str(path), "format": path.suffix.lower()[1:], "n_variables": n_variables,
            "n_constraints": n_constraints}
