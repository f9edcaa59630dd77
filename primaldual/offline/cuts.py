"""Shifted cumulative-work cuts for the per-server model of :mod:`primaldual.offline.matrix` (``docs/bounds.md``,
"Shifted work cuts").

The strong formulation's cut says that a job completed by slot ``t`` has done its work ``V`` by then:
``work_done[t] >= V (admit - unfinished[t+1])``. It says nothing about a job that completes *after* ``t``,
yet such a job, completing in slot ``c > t``, can do at most ``n`` worker-slots per slot in ``(t, c]``, where
``n = min(N, sum_h fit_h)`` (eq. (3) and how many of its workers fit on the servers at once). So

    work_done[t] >= V (admit - unfinished[t+1]) + sum_{c = t+1}^{t+D-1} (V - n (c - t)) complete[c],
    D = ceil(V / n)

for every slot ``t`` before the horizon's last. *Validity*: an integer solution sets at most one indicator; if
none, or one at ``c <= t``, this is the strong cut; if one at ``c > t``, the job's last worker is in slot
``c`` or earlier (the linearisation's indicator sits at or after the true completion), so the work in
``(t, c]`` is at most ``n (c - t)`` and the work by ``t`` at least ``V - n (c - t)``; where that is not
positive the term is left out. The rows replace the strong cut (they contain it); the LP relaxation loses its
cheapest cheat, a job that claims an early completion with a fractional weight and does its work late, since
the work must now be front-loaded in proportion to how early the completion is claimed.

Cost: one row per (job, slot) from ``first - D + 1`` (and the arrival) to ``T - 2``, with up to ``D + 2`` terms.
"""

from __future__ import annotations

import numpy as np


def add_shifted_work_rows(model, x: dict, per_slot: np.ndarray) -> int:
    """Append the rows of the module docstring to ``model`` (``constraints(count, lower, upper)`` returning the
    first row, ``terms(rows, cols, values)``). ``x`` is the index of :func:`primaldual.offline.matrix.build_matrix_model`
    (offsets, slot and completion indices, work, first completion slot, horizon); ``per_slot[j]`` is ``n`` of
    job position ``j``. Returns the number of rows."""
    o, sj, st = x["offsets"], x["slot_job"], x["slot_t"]
    q = np.arange(sj.size)
    work, first, horizon = x["work"], x["first"], x["horizon"]
    span = np.ceil(work / np.maximum(per_slot, 1)).astype(np.int64)  # D per job
    keep = (st < horizon - 1) & (st >= first[sj] - span[sj] + 1)
    rows = model.constraints(np.count_nonzero(keep), 0.0, np.inf) + np.arange(np.count_nonzero(keep))
    qk, jk, tk = q[keep], sj[keep], st[keep]
    model.terms(rows, o["work_done"] + qk, 1.0)
    done = tk >= first[jk]  # the strong cut's terms: nothing can be completed by t before the first slot
    model.terms(rows[done], o["admit"] + jk[done], -work[jk[done]])
    model.terms(rows[done], o["unfinished"] + qk[done] + 1, work[jk[done]])
    for k in range(1, int(span.max(initial=1))):
        slot = tk + k
        coefficient = work[jk] - per_slot[jk] * k
        column = x["complete_index"][jk, np.minimum(slot, horizon - 1)]
        ok = (coefficient > 0) & (slot < horizon) & (column >= 0)
        model.terms(rows[ok], o["complete"] + column[ok], -coefficient[ok])
    return int(rows.size)


__all__ = ["add_shifted_work_rows"]
