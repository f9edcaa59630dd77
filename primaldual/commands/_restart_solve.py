"""``primaldual solve --restart-cost F``: the offline optimum *with* restart costs.

It is the OPT part of :func:`primaldual.evaluation.pipeline.evaluate` at restart cost ``F``: the online schedulers
run at ``F`` (the best one is the MIP start and a verified lower bound), the exact restart model
(:mod:`primaldual.models.restart`) is solved where it is within reach and its schedule replayed through the
simulator, and when it is not proven the start-cost relaxation bounds OPT from above. The answer is the OPT
interval: ``proven`` with ``low == high`` where the solver proved it, the interval otherwise.
"""

from __future__ import annotations

from primaldual.core.errors import InputError
from primaldual.core.files import save_schedule
from primaldual.core.jsonable import jsonable


def solve_with_restart_cost(instance, options, restart_cost: float, *, output: str | None, as_json: bool,
                            print_json) -> int:
    """Run the evaluation's OPT at ``restart_cost`` and print it; 0 on a verified schedule, else 1."""
    from primaldual.evaluation.pipeline import evaluate
    from primaldual.simulation.scheduler import available_schedulers

    from primaldual.offline.methods import may_be_ilp

    if not may_be_ilp(options.method):
        raise InputError(f"--restart-cost: the exact restart model is an ILP; --method {options.method} does not "
                         "apply (use ilp or auto)")
    # --time-limit bounds the whole answer, the schedulers at the restart cost and the exact solve included.
    evaluation = evaluate(instance, available_schedulers(), solve=options, restart_cost=restart_cost,
                          time_limit=options.time_limit)
    interval, exact = evaluation.interval, evaluation.restart_opt
    schedule = None if exact is None else exact.schedule
    if output and schedule is not None:
        save_schedule(schedule, output)
    out = {
        "status": "optimal" if interval.proven else ("feasible" if interval.low > 0 else "unknown"),
        "restart_cost": restart_cost, "model": "restart" if exact is not None else "start-cost relaxation",
        "utility": interval.low, "objective": interval.low, "bound": interval.high,
        "gap": (interval.high - interval.low) / max(1e-12, abs(interval.high)) if interval.high else 0.0,
        "proven": interval.proven,
        "solver": exact.solve.solver if exact is not None else options.solver,
        "solver_version": exact.solve.solver_version if exact is not None else None, "opt_interval": interval.to_dict(), "opt": evaluation.offline_entry,
        "relaxation": evaluation.relaxation if not interval.proven else None,
        "warnings": list(evaluation.warnings), "output": output if schedule is not None else None,
    }
    if as_json:
        print_json(jsonable(out))
    else:
        what = "proven optimum" if interval.proven else "OPT lies in"
        print(f"restart cost {restart_cost:g}: {what} [{interval.low:.10g}, {interval.high:.10g}] "
              f"(low: {interval.low_method}, high: {interval.high_method})")
        for warning in evaluation.warnings:
            print(f"warning: {warning}")
    return 0 if interval.low > 0 or interval.proven else 1


__all__ = ["solve_with_restart_cost"]
