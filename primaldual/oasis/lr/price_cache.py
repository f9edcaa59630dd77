"""OASiS-LR's cell prices over its ledger, kept up to date as the ledger changes (:class:`PriceCache`).

A cell's price is the exponential of the amount the ledger reserves in it plus the learned floor
(:func:`primaldual.oasis.prices.exponential_price`, :mod:`primaldual.oasis.learned_floor`); the ledger
(:mod:`primaldual.oasis.ledger`) records which slots each change touched, so only those are recomputed.
"""

from __future__ import annotations

import numpy as np

from primaldual.dual.cost_floor import suffix_minimum
from primaldual.oasis.prices import exponential_price


class PriceCache:
    """OASiS-LR's cell prices ``L^r e^(theta^r g / c) + floor^r`` and free amounts over one ledger, kept up to date
    incrementally: only the slots the ledger changed since the last update are recomputed (each once, however
    many changes touched it), and a new floor only re-adds itself to the exponential part (kept). Slots before
    ``slot`` are never read again, so they are left stale. A new cache is needed when the ledger is replaced (a
    re-pack) or an earlier slot is asked for (:meth:`valid`). **Gain**: without the incremental refresh a
    ``paper`` run takes 2.5x as long, a Philly week 1.06x (``examples/cache_ablation.py``, "price cache
    refreshes all slots"; ``docs/measurements.md``, "What each cache buys")."""

    def __init__(self, ledger: "Ledger", constants, floor, slot: int):
        self.ledger, self.constants, self.floor, self.slot = ledger, constants, floor, slot
        shape_w, shape_ps = ledger.worker_used.shape, ledger.ps_used.shape
        self.exponential = (np.zeros(shape_w), np.zeros(shape_ps))
        self.prices = (np.zeros(shape_w), np.zeros(shape_ps))
        self.free = (np.zeros(shape_w), np.zeros(shape_ps))
        self.seen = None  # nothing computed yet
        # Per pool, slot and resource, the least price; and their suffix minima (least_prices) until a change.
        self._slot_least = (np.zeros((shape_w[0], shape_w[2])), np.zeros((shape_ps[0], shape_ps[2])))
        self._least = None
        self.touched = np.zeros(shape_w[0], dtype=bool)  # slots recomputed since the last take_touched

    def copy_onto(self, ledger: "Ledger") -> "PriceCache":
        """The same cache over ``ledger`` (a copy of this cache's ledger): a rollout's twin starts with the
        prices already computed. Constants and floor are shared (never changed in place). Gain: 1.10x on
        ``paper``, none measurable on a Philly week (``examples/cache_ablation.py``, "twins rebuild their prices")."""
        other = PriceCache.__new__(PriceCache)
        other.ledger, other.constants, other.floor, other.slot = ledger, self.constants, self.floor, self.slot
        other.exponential = tuple(a.copy() for a in self.exponential)
        other.prices = tuple(a.copy() for a in self.prices)
        other.free = tuple(a.copy() for a in self.free)
        other.seen = self.seen
        other._slot_least = tuple(a.copy() for a in self._slot_least)
        other._least = None if self._least is None else tuple(a.copy() for a in self._least)
        other.touched = self.touched.copy()
        return other

    def valid(self, ledger: "Ledger", slot: int) -> bool:
        return ledger is self.ledger and slot >= self.slot

    def _set_floor(self, floor, slot: int) -> None:
        """A floor of a different value: the prices from ``slot`` on are the kept exponential part plus it."""
        self.floor = floor
        if self.seen is not None:
            self._refresh(np.arange(slot, self.ledger.worker_used.shape[0]), exponential=False)

    def update(self, slot: int, floor=None) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """The prices and free amounts, current from ``slot`` on, with ``floor`` (default: the cached one)."""
        ledger = self.ledger
        if floor is not None and floor is not self.floor:
            if np.array_equal(floor.worker, self.floor.worker) and np.array_equal(floor.ps, self.floor.ps):
                self.floor = floor  # the same values: nothing to recompute
            else:
                self._set_floor(floor, slot)
        if self.seen == len(ledger.changes):  # no change since the last update: no row to recompute
            self.slot = slot
            return self.prices, self.free
        if self.seen is None:
            rows = np.arange(slot, ledger.worker_used.shape[0])
        else:
            changed = np.zeros(ledger.worker_used.shape[0], dtype=bool)
            for first, last in ledger.changes[self.seen:]:
                changed[max(first, slot):last + 1] = True
            rows = np.flatnonzero(changed)
        self.seen, self.slot = len(ledger.changes), slot
        if rows.size:
            self._refresh(rows, exponential=True)
        return self.prices, self.free

    def _refresh(self, rows: np.ndarray, exponential: bool) -> None:
        """Recompute ``rows`` (ascending slots): a run of consecutive slots, as a block's change gives, is read
        and written as a slice (the same elements and floats, without fancy indexing's copies). With the kept log
        ratios and one-family utility tables (4c6ee6b): 4-6% less process CPU on ee9e8c's busiest week and a
        ``paper`` run, alternated with 66177a5."""
        ledger, constants = self.ledger, self.constants
        if rows.size and rows[-1] - rows[0] + 1 == rows.size:
            rows = slice(int(rows[0]), int(rows[-1]) + 1)
        for pool, (used, capacity, lower, theta, floor) in enumerate((
            (ledger.worker_used, ledger.worker_capacity, constants.worker_lower, constants.worker_log_ratio,
             self.floor.worker),
            (ledger.ps_used, ledger.ps_capacity, constants.ps_lower, constants.ps_log_ratio, self.floor.ps),
        )):
            if exponential:
                in_rows = used[rows]
                self.exponential[pool][rows] = part = exponential_price(lower, theta, in_rows, capacity[None])
                self.free[pool][rows] = capacity[None] - in_rows
            else:
                part = self.exponential[pool][rows]
            self.prices[pool][rows] = prices = part + floor
            self._slot_least[pool][rows] = prices.min(axis=1)
        self._least = None
        self.touched[rows] = True

    def take_touched(self, slot: int) -> np.ndarray:
        """The slots ``>= slot`` whose prices were recomputed since the last call (or since the cache was
        built), and forget them: any other slot's prices are the same floats as at that call."""
        rows = slot + np.flatnonzero(self.touched[slot:])
        self.touched[:] = False
        return rows

    def least_prices(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`primaldual.dual.subroutine.least_prices` of the current prices (valid from ``slot`` on: row ``t`` reads
        slots ``>= t`` only), recomputed only after a change."""
        if self._least is None:
            self._least = tuple(suffix_minimum(least) for least in self._slot_least)
        return self._least


__all__ = ["PriceCache"]
