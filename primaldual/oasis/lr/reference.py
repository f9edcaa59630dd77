"""OASiS-LR's execution of a slot, the parts written as plain loops (the twin as data, begun).

:mod:`primaldual.dual.kernel` compiles these functions with numba, as it compiles the dual subroutine
(:mod:`primaldual.dual.reference`); ``PRIMALDUAL_KERNEL=reference`` runs this very text as Python. Every function
takes numpy arrays and numbers only. :mod:`primaldual.oasis.lr.execution` prepares them and calls
:func:`primaldual.oasis.lr.kernel.functions`.

**First fit** (:func:`place_most`). A growing job gets the most workers ``D <= limit`` whose ``Z(D)`` PSs fit too
(eq. (6)); both pools are filled first-fit: server by server in index order, each taking what is left of the
count up to the units that fit on it. How many units fit on a server is the rule of the dual subroutine
(:func:`primaldual.dual.reference.units_that_fit`: the least over the demanded resources of
``floor((free + FIT_TOLERANCE) / demand)``), so the project states it once. The result and the capacity left are
bit for bit those of the array programme this replaced (``units_that_fit``, ``_first_fit`` and
``FreeCapacity.take`` of :mod:`primaldual.simulation.placement`): the same IEEE operations on the same values,
``free - count * demand`` per cell in the same order; randomized tests compare the two
(``tests/oasis/test_oasis_lr_speed.py``, as Python and compiled).

**Cost.** ``O((H + K) R)`` per call, without the dozen small numpy temporaries per call the array programme
made (0.2 million calls on one Philly week's rollouts: ``docs/measurements.md``, "OASiS-LR's slot compiled").
"""

from __future__ import annotations

import numpy as np

from primaldual.dual.reference import FIT_TOLERANCE, units_that_fit  # noqa: F401 - the compiled copy's globals

#: A server's units when the demand is zero in every resource (:data:`primaldual.simulation.placement.UNBOUNDED`).
UNBOUNDED = 1 << 40
#: The cap of a count where the demand is positive: above any count the domains allow (docs/input-ranges.md).
NO_LIMIT = 1 << 62


def server_caps(free: np.ndarray, demand: np.ndarray, caps: np.ndarray) -> int:
    """``caps[s]``: the units of ``demand`` that fit on server ``s`` of ``free`` (S, R); returns their sum."""
    positive = False
    for r in range(demand.shape[0]):
        if demand[r] > 0:
            positive = True
    total = 0
    for s in range(free.shape[0]):
        caps[s] = units_that_fit(free, s, demand, NO_LIMIT) if positive else UNBOUNDED
        total += caps[s]
    return total


def first_fit(count: int, caps: np.ndarray, out: np.ndarray) -> bool:
    """``out[s]``: ``count`` units spread first-fit over servers holding at most ``caps[s]``; False (``out``
    undefined) if they do not fit."""
    room = 0
    for s in range(caps.shape[0]):
        room += min(caps[s], count)
    if room < count:
        return False
    left = count
    for s in range(caps.shape[0]):
        out[s] = min(caps[s], left)
        left -= out[s]
    return True


def take(free: np.ndarray, counts: np.ndarray, demand: np.ndarray) -> None:
    """``free -= counts[:, None] * demand[None, :]``, cell by cell."""
    for s in range(free.shape[0]):
        for r in range(free.shape[1]):
            free[s, r] = free[s, r] - counts[s] * demand[r]


def place_most(worker_free: np.ndarray, ps_free: np.ndarray, worker_demand: np.ndarray, ps_demand: np.ndarray,
               limit: int, ps_needed: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> int:
    """The most workers ``D <= limit`` (``limit < len(ps_needed)``) whose ``Z(D) = ps_needed[D]`` PSs fit too,
    placed first-fit into ``workers`` (H,) and ``parameter_servers`` (K,) and taken from the free amounts;
    returns ``D``, or 0 with nothing taken if not one worker fits."""
    worker_room = server_caps(worker_free, worker_demand, workers)
    count = min(limit, worker_room)
    if count <= 0:
        return 0  # the PS pool need not be looked at
    ps_caps = np.empty(ps_free.shape[0], dtype=np.int64)
    ps_room = min(server_caps(ps_free, ps_demand, ps_caps), UNBOUNDED)
    while count > 0 and ps_needed[count] > ps_room:
        count -= 1
    if count <= 0:
        return 0
    worker_caps = workers.copy()
    if not first_fit(count, worker_caps, workers) or not first_fit(ps_needed[count], ps_caps, parameter_servers):
        return 0
    take(worker_free, workers, worker_demand)
    take(ps_free, parameter_servers, ps_demand)
    return count


#: The functions :mod:`primaldual.dual.kernel` compiles, callees before callers.
KERNEL_FUNCTIONS = ("units_that_fit", "server_caps", "first_fit", "take", "place_most")

__all__ = ["KERNEL_FUNCTIONS", "NO_LIMIT", "UNBOUNDED", "first_fit", "place_most", "server_caps", "take"]
