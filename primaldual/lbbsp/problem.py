"""The batch-sizing problem of docs/papers.md, LB-BSP ([design]) as a frozen value object.

    minimise   max_i T_i(x_i)
    subject to sum_i x_i = global_batch,   min_batch <= x_i <= memory_cap_i,   x_i integer.

The fast exact solver (:mod:`primaldual.lbbsp.exact`) takes this object, and :mod:`primaldual.lbbsp.reference`
hands its arrays to the Pyomo reference model (:mod:`primaldual.models.batch_sizing`), so both provably solve
the same problem.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.errors import InputError
from primaldual.lbbsp.time_laws import TimeLaws


@dataclass(frozen=True)
class BatchSizingProblem:
    """One instance of the min-max batch-sizing problem.

    ``memory_cap`` (M_i) defaults to ``global_batch`` for every worker, i.e. no memory limit.
    ``min_batch`` (x_min) defaults to 1: a worker with 0 samples would break the weighted mean
    (docs/papers.md, LB-BSP).
    """

    laws: TimeLaws
    global_batch: int
    min_batch: int = 1
    memory_cap: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = self.laws.n_workers
        cap = np.full(n, self.global_batch, dtype=np.int64) if self.memory_cap is None else np.asarray(self.memory_cap)
        problems = []
        if cap.shape != (n,):
            problems.append(f"memory_cap: must have one entry per worker ({n}), got shape {cap.shape}")
        elif not np.all(np.equal(np.mod(cap, 1), 0)):
            problems.append("memory_cap: must be integers")
        if int(self.global_batch) != self.global_batch or self.global_batch < 1:
            problems.append(f"global_batch: must be an integer >= 1, got {self.global_batch}")
        if int(self.min_batch) != self.min_batch or self.min_batch < 0:
            problems.append(f"min_batch: must be an integer >= 0, got {self.min_batch}")
        if problems:
            raise InputError(problems)
        cap = cap.astype(np.int64)
        if np.any(cap < self.min_batch):
            raise InputError(f"memory_cap: every cap must be >= min_batch={self.min_batch}, got min {cap.min()}")
        if n * self.min_batch > self.global_batch:
            raise InputError(
                f"global_batch: must be >= workers * min_batch = {n} * {self.min_batch}, got {self.global_batch}")
        if cap.sum() < self.global_batch:
            raise InputError(f"global_batch: exceeds the total memory cap {int(cap.sum())}, got {self.global_batch}")
        cap.setflags(write=False)
        object.__setattr__(self, "memory_cap", cap)
        object.__setattr__(self, "global_batch", int(self.global_batch))
        object.__setattr__(self, "min_batch", int(self.min_batch))

    @property
    def n_workers(self) -> int:
        return self.laws.n_workers

    @property
    def lower(self) -> np.ndarray:
        return np.full(self.n_workers, self.min_batch, dtype=np.int64)

    def makespan(self, batch) -> float:
        """Objective value ``max_i T_i(x_i)`` of an allocation."""
        return float(np.max(self.laws.seconds(batch)))

    def is_feasible(self, batch) -> bool:
        batch = np.asarray(batch)
        return bool(batch.shape == (self.n_workers,)
                    and np.all(np.equal(np.mod(batch, 1), 0))
                    and int(batch.sum()) == self.global_batch
                    and np.all(batch >= self.min_batch)
                    and np.all(batch <= self.memory_cap))
