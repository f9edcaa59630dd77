"""RRH: the risk-reward heuristic of Irwin, Grit and Chase, "Balancing risk and reward in a market-based task
service", HPDC 2004 (docs/papers.md, OASiS).

Irwin et al. rank tasks whose value decays with delay by *reward*: present value, weighed against the
opportunity cost that running the task imposes on the others, per unit of resource-time (their FirstReward
heuristic), and admit tasks by the same measure. Reading, for job ``i`` at slot ``t``:

* ``d_i = ceil(R_i / N_i)``: the slots it still needs at full speed (``R_i`` its remaining work);
* ``yield_i = f_i(t + d_i - 1 - a_i)``: its utility if it runs at full speed from now (eq. (1));
* ``decay_i = yield_i - f_i(t + d_i - a_i)``: what one more slot of waiting costs it;
* ``PV_i = yield_i / (1 + discount_rate * d_i)``: present value, discounted for the risk of the ``d_i`` slots
  it still has to run;
* ``cost_i = d_i * sum_{j != i} decay_j``: opportunity cost, the decay the other candidates suffer while ``i``
  runs;
* ``reward_i = (risk_weight * PV_i - (1 - risk_weight) * cost_i) / (R_i * u_i)``, where ``u_i`` is the dominant
  share of one worker with its ``b_i / B_i`` PS (both pools), so ``R_i u_i`` is its remaining resource-time.

**Admission** (at arrival): a job is admitted iff its reward among the admitted, unfinished jobs is positive;
a rejected job never runs. **Scheduling** (every slot): admitted jobs are ranked by reward (ties: lower index)
and served greedily in that order, each with as many workers as fit, up to ``min(N_i, R_i)``, and the PSs
eq. (6) needs.

**Preemption** (``preemptive``). The source leaves it open whether a started task may be displaced; both
readings are offered:

* ``preemptive=True`` (the default): the greedy pass starts from an empty cluster every slot, so a denser
  newcomer can take resources from a running job (the model charges nothing for preemption);
* ``preemptive=False``: a started job keeps the workers and PSs it holds, on the same servers, until it
  completes (in its last slot only what its remaining work needs). The greedy pass then runs on what is left:
  in rank order each admitted job, running or waiting, grows towards ``min(N_i, R_i)`` workers as far as the
  free capacity allows. A running job is only released when it can no longer finish (``skip_unfinishable``).

Choices in the baseline's favour (the source schedules sequential tasks on a market of processors, so the
mapping to elastic worker/PS jobs is ours):

* preemption is on by default: re-ranking every slot lets a denser newcomer take resources from a running job,
  which lets the ranking do its job (on ``small`` instances, seeds 0-19 with 10 and 20 jobs, mean utility
  245.4 against 232.5 without preemption);
* jobs that can no longer finish by the horizon at full speed are dropped (``skip_unfinishable``), and jobs
  that cannot finish are never admitted;
* the defaults ``discount_rate = 0.02`` per slot and ``risk_weight = 1`` gave RRH its highest mean utility
  over a grid (discount 0, 0.01, 0.02, 0.05, 0.1, 0.2 x weight 1, 0.95, 0.9, 0.8, 0.5, 0.3) on ``small``
  instances (seeds 0-19, 10 and 20 jobs): mean utility 245.4 at weight 1 against 224.9 at 0.8 and 161.6 at
  0.3. With weight 1 the opportunity cost drops out, so admission only turns away jobs that cannot finish
  and the ranking is present value per resource-time; set ``risk_weight < 1`` for the source's full
  reward, whose opportunity cost also rejects jobs at arrival.

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): rewards and the
finishing test read the remaining work on each job's fastest type; each job's workers go to the first type with
room (a held allocation keeps its type when it grows), capped by the work left on its slowest type, then trimmed
to what its type needs.

Parameters: ``discount_rate`` (>= 0), ``risk_weight`` (in [0, 1], the source's alpha), ``preemptive``
(True), ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).

**The three readings, named** (``parameters()["reading"]`` records which one ran):

* ``rrh`` with the defaults is the **present-value reading**: ``risk_weight = 1`` drops the source's
  opportunity-cost term, admission turns away only jobs that cannot finish, and running jobs are preempted
  and re-placed freely every slot. It is the reading most favourable to RRH in this model (free preemption,
  free abandonment of started jobs that can no longer finish: see ``metrics.abandoned``).
* ``--param risk_weight=0.8`` is the **source's full reward** (FirstReward with opportunity cost, Irwin et al.
  section 4): present value weighed against the decay the other jobs suffer while this one runs; it also
  rejects jobs at arrival.
* ``--param preemptive=false`` is **non-preemptive RRH**: a started job keeps its servers to completion.

Under the simulator's restart costs (``simulate(..., restart_cost=F)``) every re-placement of a running job
costs it ``F`` of a slot's work, which is what free preemption costs on a real cluster. The defaults were
chosen on a few ``small`` seeds; evaluate RRH on seeds disjoint from those (``bench oasis --quality`` lists them).
"""

from __future__ import annotations

from primaldual.baselines import parameter_specs
import numpy as np

from primaldual.core.utility import UtilityTable, utilities_at
from primaldual.simulation.placement import (
    FreeCapacity,
    can_finish,
    check_placement,
    demand_profiles,
    dominant_share_unit,
    fit_to_need,
    grow,
    most_needed,
    need_of,
    trim,
    widest,
)
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState


class RrhScheduler(OnlineScheduler):
    name = "rrh"
    PARAMETER_SPECS = parameter_specs.RRH
    handles_gpu_types = True
    # 2: skip_unfinishable assumes the width the job can have (placement.widest), not N_i.
    revision = 2

    def __init__(self, discount_rate: float = 0.02, risk_weight: float = 1.0, preemptive: bool = True,
                 placement: str = "first_fit", skip_unfinishable: bool = True):
        if not (isinstance(discount_rate, (int, float)) and np.isfinite(discount_rate) and discount_rate >= 0):
            raise ValueError(f"discount_rate must be a number >= 0, got {discount_rate!r}")
        if not (isinstance(risk_weight, (int, float)) and 0 <= risk_weight <= 1):
            raise ValueError(f"risk_weight must be a number in [0, 1], got {risk_weight!r}")
        self.discount_rate = float(discount_rate)
        self.risk_weight = float(risk_weight)
        if not isinstance(preemptive, (bool, np.bool_)):
            raise ValueError(f"preemptive must be true or false, got {preemptive!r}")
        self.preemptive = bool(preemptive)
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        self.instance = instance
        cluster = instance.cluster
        worker_total, ps_total = cluster.worker_capacity.sum(axis=0), cluster.ps_capacity.sum(axis=0)
        self.unit = np.array([dominant_share_unit(job, worker_total, ps_total) for job in instance.jobs])
        self.chunks = np.array([job.chunks for job in instance.jobs], dtype=np.int64)
        self.arrival = np.array([job.arrival for job in instance.jobs], dtype=np.int64)
        self.utilities = UtilityTable([job.utility for job in instance.jobs])
        self.widest = widest(instance)
        self.profile = demand_profiles(instance)
        self.remaining = np.array(instance.work_units, dtype=np.int64)
        self.admitted: list[int] = []
        self.rejected: list[int] = []
        self.dropped: list[int] = []
        self.held: dict[int, Allocation] = {}  # without preemption: what each started job keeps

    def reading(self) -> str:
        """Which documented reading these parameters are (module docstring)."""
        reward = "present value" if self.risk_weight == 1.0 else f"full reward (opportunity cost, weight {self.risk_weight:g})"
        return f"{reward}, {'preemptive' if self.preemptive else 'non-preemptive'}"

    def parameters(self) -> dict:
        return {
            "reading": self.reading(),
            "discount_rate": self.discount_rate,
            "risk_weight": self.risk_weight,
            "preemptive": self.preemptive,
            "placement": self.placement,
            "skip_unfinishable": self.skip_unfinishable,
        }

    def report(self) -> dict:
        return {"admitted": list(self.admitted), "rejected": list(self.rejected), "dropped": list(self.dropped)}

    def rewards(self, slot: int, jobs: list[int]) -> np.ndarray:
        """``reward_i`` of each of ``jobs`` at ``slot``, the others in ``jobs`` being the competition."""
        jobs_array = np.asarray(jobs, dtype=np.int64)
        # At least one worker-slot: under restart costs this slot's own count can run ahead of the simulator's.
        remaining = np.maximum(self.remaining[jobs_array], 1)
        needed = -(-remaining // self.chunks[jobs_array])
        # Both durations of every job in one call per utility family (utilities_at: the same values, elementwise).
        now_duration = slot + needed - 1 - self.arrival[jobs_array]
        value = utilities_at(self.utilities, jobs_array, now_duration)
        decay = value - utilities_at(self.utilities, jobs_array, now_duration + 1)
        present = value / (1.0 + self.discount_rate * needed)
        cost = needed * (decay.sum() - decay)
        reward = self.risk_weight * present - (1.0 - self.risk_weight) * cost
        # A job that demands nothing has no resource-time; rank it first instead of dividing by zero.
        return reward / (remaining * np.maximum(self.unit[jobs_array], 1e-12))

    def _finishable(self, slot: int, i: int) -> bool:
        return bool(can_finish(slot, int(self.remaining[i]), int(self.widest[i]), self.instance.horizon))

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            if self.skip_unfinishable and not self._finishable(slot, i):
                self.rejected.append(i)
                continue
            candidates = self.admitted + [i]
            if self.rewards(slot, candidates)[-1] > 0:
                self.admitted.append(i)
            else:
                self.rejected.append(i)

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        done = set(jobs)
        self.admitted = [i for i in self.admitted if i not in done]
        for i in jobs:
            self.held.pop(i, None)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        self.remaining = np.array(state.remaining_work, dtype=np.int64)  # the simulator's account is the truth
        if self.skip_unfinishable and self.admitted:
            admitted = np.asarray(self.admitted, dtype=np.int64)
            finishable = can_finish(slot, self.remaining[admitted], self.widest[admitted], self.instance.horizon)
            late = admitted[~finishable].tolist()
            if late:
                self.dropped.extend(late)
                self.admitted = [i for i in self.admitted if i not in set(late)]
                for i in late:
                    self.held.pop(i, None)
        if not self.admitted:
            return {}
        reward = self.rewards(slot, self.admitted)
        order = sorted(range(len(self.admitted)), key=lambda m: (-reward[m], self.admitted[m]))
        jobs = self.instance.jobs
        free = FreeCapacity(self.instance.cluster)
        out: dict[int, Allocation] = {}
        for i, allocation in self.held.items():  # empty when preemptive
            most = int(min(self.chunks[i], need_of(self.instance, state, i, allocation)))
            out[i] = trim(jobs[i], allocation, most) if int(allocation.workers.sum()) > most else allocation
            free.take(jobs[i], out[i])
        # Free capacity only shrinks in this pass, so once not one worker of a demand profile fits, none fits
        # for the rest of the slot: those jobs are skipped without the same failed search (same decisions).
        no_room = set()
        caps = self.remaining if state.remaining_fraction is None else most_needed(self.instance, state)
        for m in order:
            i = self.admitted[m]
            most = int(min(self.chunks[i], caps[i]))
            if i in out:
                out[i] = grow(free, jobs[i], out[i], most, self.placement)
            elif self.profile[i] not in no_room:
                workers = free.max_workers(jobs[i], most, self.placement)
                if workers > 0:
                    out[i] = free.place(jobs[i], workers, self.placement)
                elif most > 0:
                    no_room.add(self.profile[i])
        out = fit_to_need(self.instance, state, out)
        for i, allocation in out.items():
            self.remaining[i] -= int(allocation.workers.sum())
        if not self.preemptive:
            self.held = dict(out)
        return out
