"""LB-BSP: semi-dynamic batch sizing against stragglers (Chen et al., SoCC 2020).

The paper as used here: ``docs/papers.md`` (LB-BSP) and ``docs/lbbsp-traces.md``; every [design] formula is
this package's choice, documented there.

* :mod:`.time_laws` -- per-worker time laws T_i(x) (linear CPU, flat-then-linear GPU);
* :mod:`.problem` -- the min-max batch-sizing problem; :mod:`.exact` -- its fast exact solver
  (the Pyomo reference model is :mod:`primaldual.models.batch_sizing`, posed by :mod:`.reference`);
* :mod:`.cpu` -- proportional rule with largest-remainder rounding and water-filling bounds;
* :mod:`.predictors` -- the speed predictors of the CPU rule (point, regression, scenario-robust, ``select``;
  by name in :mod:`.predictors.registry`);
* :mod:`.gpu` -- the leader/straggler stepper;
* :mod:`.scenarios`, :mod:`.simulator` -- BSP cluster simulation of BSP, LB-BSP and an oracle;
* :mod:`.aggregation` -- batch-size-weighted gradient aggregation on real SGD;
* :mod:`.bench` -- ``primaldual bench lbbsp``;
* :mod:`.traces` -- recorded straggler traces (packaged Alibaba PAI jobs, CC BY 4.0; PAI or simple CSV) and
  synthetic traces following the packaged CoV table; :mod:`.replay` -- BSP, LB-BSP and the oracle on them;
* :mod:`.training` -- real data-parallel SGD with spawned worker processes (``lbbsp train``);
* :mod:`.expected` -- :func:`expectations`, the expected figures with tolerances for ``reproduce``.
"""

from primaldual.lbbsp.cpu import equal_batches, proportional_batches, proportional_shares
from primaldual.lbbsp.exact import ExactSolution, solve_exact, solve_greedy
from primaldual.lbbsp.expected import Expectation, expectations
from primaldual.lbbsp.gpu import GpuController, GpuStepperConfig, GpuStepperState, adjust
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.scenarios import Interference, Scenario, cpu_scenario, generate_trace, gpu_scenario
from primaldual.lbbsp.simulator import METHODS, SimulationResult, simulate
from primaldual.lbbsp.time_laws import TimeLaws

__all__ = [
    "BatchSizingProblem", "ExactSolution", "Expectation", "expectations", "GpuController", "GpuStepperConfig", "GpuStepperState", "Interference",
    "METHODS", "Scenario", "SimulationResult", "TimeLaws", "adjust", "cpu_scenario", "equal_batches",
    "generate_trace", "gpu_scenario", "proportional_batches", "proportional_shares", "simulate", "solve_exact",
    "solve_greedy",
]
