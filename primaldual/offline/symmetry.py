"""Exact symmetry breaking between identical servers of a pool (``docs/bounds.md``, "Identical servers").

Two servers of a pool are *identical* when their capacity vectors are equal. In the per-server model of
(1)-(13) (:mod:`primaldual.offline.matrix`) a server enters only through its capacity rows (4)-(5) and the
bounds ``y_ith <= fit_ih`` (how many units of job i fit on server h alone, a function of the job's demand and
the server's capacity); every other row reads a job's per-slot totals ``sum_h y_ith``. And no row links the
placement of one slot to that of another. So in any feasible solution, permuting the placements of one slot
among identical servers (``y_{.th} <-> y_{.th'}``) gives a feasible solution of the same value, slot by slot
independently: a class of ``m`` identical servers makes ``(m!)^T`` equivalent copies of every schedule, and a
branch-and-bound that does not know it explores them all.

**The rows.** With a weight ``w_j > 0`` per job, the *load* of server h in slot t is
``L_th = sum_j w_j y_jth``. For each class ``h_0 < h_1 < ... < h_{m-1}`` of identical servers and each slot,
:func:`add_symmetry_rows` writes ``L_{t,h_k} >= L_{t,h_{k+1}}`` (``m - 1`` rows per slot and class).
*Exactness*: take any feasible solution; in each slot and class, sort the servers' placement vectors by
decreasing load (a permutation within the class, which keeps feasibility and value, as above). The sorted
solution satisfies every new row, so the optimum is unchanged; only copies are cut off. The weights only decide
which copy survives; ``w_j = j + 1`` (job position) makes equal loads of different placements rare, so that
few copies are left.

**The MIP start** must satisfy the rows too: :func:`canonical_counts` sorts a schedule's servers the same way
(a stable sort by decreasing load), which is the permutation of the proof.

Cost: ``(m - 1) T`` rows per class and pool, each with the placement columns of two servers in one slot.
"""

from __future__ import annotations

import numpy as np


def identical_server_classes(capacity: np.ndarray) -> tuple[np.ndarray, ...]:
    """The classes of two or more servers with equal capacity vectors (rows of ``capacity``, shape (S, R)), each
    as its server indices in increasing order; classes in order of their first server."""
    capacity = np.asarray(capacity, dtype=float)
    if capacity.shape[0] < 2:
        return ()
    _, first, label = np.unique(capacity, axis=0, return_index=True, return_inverse=True)
    label = label.reshape(-1)
    classes = [np.flatnonzero(label == c) for c in np.argsort(first, kind="stable")]
    return tuple(c for c in classes if c.size >= 2)


def job_weights(n_jobs: int) -> np.ndarray:
    """``w_j = j + 1``: the weight of job position ``j`` in a server's load."""
    return np.arange(1, n_jobs + 1, dtype=float)


def _neighbours(classes, n_servers: int) -> tuple[np.ndarray, np.ndarray]:
    """Per server, the pair index ``k`` of the pair (h, successor) it leads and of the pair (predecessor, h) it
    closes (-1 where there is none); pairs are numbered over all classes."""
    leads, closes = np.full(n_servers, -1, dtype=np.int64), np.full(n_servers, -1, dtype=np.int64)
    k = 0
    for servers in classes:
        pairs = np.arange(k, k + servers.size - 1)
        leads[servers[:-1]] = pairs
        closes[servers[1:]] = pairs
        k += servers.size - 1
    return leads, closes


def add_symmetry_rows(model, placements: tuple, first_column: int, classes, n_jobs: int, horizon: int,
                      n_servers: int) -> int:
    """Append ``L_{t,h_k} - L_{t,h_{k+1}} >= 0`` for every slot with a placement and every pair of consecutive
    identical servers (module docstring) to ``model`` (an object with ``constraints(count, lower, upper)``
    returning the first row and ``terms(rows, cols, values)``). ``placements`` are the (job position, slot,
    server) of the pool's columns, which start at ``first_column``. Returns the number of rows added."""
    if not classes:
        return 0
    pj, pt, ph = placements
    n_pairs = int(sum(c.size - 1 for c in classes))
    leads, closes = _neighbours(classes, n_servers)
    slots = np.unique(pt)
    slot_position = np.full(horizon, -1, dtype=np.int64)
    slot_position[slots] = np.arange(slots.size)
    first = model.constraints(slots.size * n_pairs, 0.0, np.inf)
    weight = job_weights(n_jobs)[pj]
    columns = first_column + np.arange(pj.size)
    for pair_of, sign in ((leads[ph], 1.0), (closes[ph], -1.0)):
        keep = pair_of >= 0
        model.terms(first + slot_position[pt[keep]] * n_pairs + pair_of[keep], columns[keep], sign * weight[keep])
    return slots.size * n_pairs


def canonical_counts(counts: np.ndarray, classes) -> np.ndarray:
    """``counts`` (job position, slot, server) with each slot's servers of every class sorted by decreasing load
    ``sum_j w_j counts[j, t, h]`` (stable): the same schedule up to the permutation of the module docstring,
    satisfying the rows of :func:`add_symmetry_rows`."""
    if not classes:
        return counts
    out = counts.copy()
    load = np.einsum("j,jts->ts", job_weights(counts.shape[0]), counts.astype(float))
    for servers in classes:
        order = np.argsort(-load[:, servers], axis=1, kind="stable")  # (T, m): per slot, servers by load
        out[:, :, servers] = np.take_along_axis(counts[:, :, servers], order[None, :, :], axis=2)
    return out


__all__ = ["add_symmetry_rows", "canonical_counts", "identical_server_classes", "job_weights"]
