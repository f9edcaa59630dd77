"""``--solver auto``: which backend solves the offline ILP, picked by the model's size from measured data.

:func:`resolve_solver` reads the number of placement variables of the per-server model
(:func:`primaldual.offline.methods.placement_count`, the size ``--method auto`` reads too) and looks it up in
:data:`AUTO_SOLVER_RULE`, a table measured by ``primaldual bench solvers`` (``docs/measurements.md``,
"Second solver: SCIP"): per size class, the backend that proved the optimum sooner in the median over the
measured seeds. A backend that is not installed is skipped for the next one that is (HiGHS comes with the
package). Any other name is returned as it is, with no reason.
"""

from __future__ import annotations

from primaldual.core.instance import Instance

#: (largest placement count, backend): the first row whose count is at least the model's wins. Measured with
#: ``primaldual bench solvers`` on this project's 2-core machine (docs/measurements.md): SCIP through
#: pyscipopt proves ``tiny`` optima as fast as HiGHS (both in milliseconds) and is 2-5x slower from 5-job
#: ``small`` instances (~500 placements) on, so HiGHS is the choice at every measured size; the table keeps
#: the rule explicit and the measurement it came from.
AUTO_SOLVER_RULE: tuple[tuple[float, str], ...] = ((float("inf"), "highs"),)

#: Backends ``auto`` falls back to, in order, when the table's choice is not installed.
FALLBACK = ("highs", "scip")


def resolve_solver(instance: Instance, options) -> tuple[str, str | None]:
    """``(backend, reason)``: ``options.solver`` itself, or for ``auto`` the table's choice (module docstring)
    with the reason in words (for the result's ``message`` and ``details``)."""
    if options.solver != "auto":
        return options.solver, None
    from primaldual.backends.solvers import solver_available
    from primaldual.offline.methods import placement_count

    size = placement_count(instance)
    choice = next(solver for most, solver in AUTO_SOLVER_RULE if size <= most)
    if not solver_available(choice):
        choice = next(solver for solver in FALLBACK if solver_available(solver))
    return choice, (f"--solver auto chose {choice} for {size} placement variables (primaldual bench solvers; "
                    "docs/measurements.md)")


__all__ = ["AUTO_SOLVER_RULE", "resolve_solver"]
