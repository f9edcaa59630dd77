"""How an online primal-dual run prices resources: the strategy :class:`primaldual.oasis.engine.OnlineEngine` is given.

The engine (Algorithm 1's loop) is the same for every strategy: at each arrival it reads the unit prices of
every (slot, server, resource), runs the dual subroutine (:mod:`primaldual.dual.subroutine`) within the residual capacity,
admits or rejects, and commits. A strategy decides

- what the subroutine maximises (``objective``: ``"payoff"``, utility minus cost at the prices, eq. (21); or
  ``"utility"``, the prices only break ties);
- the prices a job arriving in slot ``t`` reads (:meth:`PriceStrategy.read`);
- how a commit raises them, returning the dual increase ``sum c (p_new - p_old)`` (:meth:`PriceStrategy.commit`);
- whether the run ends with OASiS's certificate (``certified``) and which prices the result exports.

Three strategies:

- :class:`ExponentialPrices`: the paper's prices ``L (U/L)^(used / capacity)`` (:mod:`primaldual.oasis.prices`);
  OASiS (``--scheduler oasis``) and its certificate.
- :class:`ZeroPrices`: no prices; the job pays nothing and is admitted iff it earns a positive utility; among
  schedules of equal utility the one holding the fewest server shares wins (a unit on server ``h`` is charged
  ``sum_r demand^r / c_h^r`` as a tie-break only). The ``greedy`` ablation.
- :class:`LearnedFloorPrices`: the exponential prices plus the learned shadow-price floor of
  :mod:`primaldual.oasis.learned_floor` (duals of a pooled knapsack LP over the last ``window`` slots' arrivals,
  relearned in each arrival slot), OASiS-LR's prices within OASiS's irrevocable loop. No certificate is
  claimed: OASiS's theorem assumes prices that depend on the amounts allocated only.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance, Job
from primaldual.oasis.learned_floor import FloorLearner, PriceFloor, zero_floor
from primaldual.oasis.prices import PriceConstants, PriceState, standalone_utilities


@runtime_checkable
class PriceStrategy(Protocol):
    """What :class:`primaldual.oasis.engine.OnlineEngine` needs from a pricing rule (module docstring).

    ``start`` begins a run (a strategy may keep per-run state, so each run calls it once, first).
    """

    name: str
    objective: str
    certified: bool
    constants: PriceConstants | None

    def start(self, instance: Instance) -> PriceState:
        """A fresh state (amounts, free capacity, prices) for a run on ``instance``."""

    def read(self, state: PriceState, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The worker and PS unit prices, shape (T, H, R) and (T, K, R), seen by a job arriving in ``slot``."""

    def commit(self, state: PriceState, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        """Add an admitted job's allocation to ``state``; return the dual increase from prices."""

    def final_prices(self, state: PriceState) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The worker and PS prices the run's result exports (copies), or ``(None, None)``."""


class ExponentialPrices:
    """The paper's prices ``L^r (U^r/L^r)^(used / capacity)`` with ``constants`` (:mod:`primaldual.oasis.prices`)."""

    name = "exponential"
    objective = "payoff"
    certified = True

    def __init__(self, constants: PriceConstants):
        self.constants = constants

    def start(self, instance: Instance) -> PriceState:
        return PriceState(instance, self.constants)

    def read(self, state: PriceState, slot: int) -> tuple[np.ndarray, np.ndarray]:
        return state.worker_prices, state.ps_prices

    def commit(self, state: PriceState, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        return state.commit(job, workers, parameter_servers)

    def final_prices(self, state: PriceState) -> tuple[np.ndarray | None, np.ndarray | None]:
        return state.worker_prices.copy(), state.ps_prices.copy()


def share_prices(capacity: np.ndarray) -> np.ndarray:
    """``1 / c_h^r`` (0 where ``c = 0``): the tie-break "price" of a unit, the share of a server it is."""
    return np.divide(1.0, capacity, out=np.zeros(capacity.shape), where=capacity > 0)


class ZeroPrices:
    """No prices: admit iff the utility is positive; server shares ``1/c`` break ties (module docstring)."""

    name = "zero"
    objective = "utility"
    certified = False
    constants = None

    def start(self, instance: Instance) -> PriceState:
        state = PriceState(instance, None)
        self._tie_break = tuple(np.broadcast_to(share_prices(pool.pool.capacity), pool.capacity.shape)
                                for pool in state.pools)
        return state

    def read(self, state: PriceState, slot: int) -> tuple[np.ndarray, np.ndarray]:
        return self._tie_break

    def commit(self, state: PriceState, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        state.allocate(job, workers, parameter_servers)
        return 0.0

    def final_prices(self, state: PriceState) -> tuple[np.ndarray | None, np.ndarray | None]:
        return None, None


class LearnedFloorPrices:
    """Exponential prices plus the learned floor of :mod:`primaldual.oasis.learned_floor` (module docstring).

    ``window`` is the learner's window in slots (OASiS-LR's default, 30). ``floor`` is the floor of the last
    slot read; ``highest`` the elementwise largest floor of the run.
    """

    name = "learned-floor"
    objective = "payoff"
    certified = False

    def __init__(self, constants: PriceConstants, window: int = 30):
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
            raise InputError(f"window: must be an integer >= 1 (slots of arrivals the floor learns from), "
                             f"got {window!r}")
        self.constants = constants
        self.window = int(window)

    def start(self, instance: Instance) -> PriceState:
        self._learner = FloorLearner(instance, standalone_utilities(instance), self.window)
        self.floor: PriceFloor = zero_floor(instance.cluster.n_resources)
        self._slot: int | None = None
        return PriceState(instance, self.constants)

    @property
    def highest(self) -> PriceFloor:
        return self._learner.highest

    def read(self, state: PriceState, slot: int) -> tuple[np.ndarray, np.ndarray]:
        if slot != self._slot:  # the floor is learned once per arrival slot, from the arrivals up to it
            self.floor, self._slot = self._learner.update(slot), slot
        return state.worker_prices + self.floor.worker, state.ps_prices + self.floor.ps

    def commit(self, state: PriceState, job: Job, workers: np.ndarray, parameter_servers: np.ndarray) -> float:
        # The floor does not move within a slot, so the dual increase is the exponential part's.
        return state.commit(job, workers, parameter_servers)

    def final_prices(self, state: PriceState) -> tuple[np.ndarray | None, np.ndarray | None]:
        return state.worker_prices + self.floor.worker, state.ps_prices + self.floor.ps


__all__ = ["ExponentialPrices", "LearnedFloorPrices", "PriceStrategy", "ZeroPrices", "share_prices"]
