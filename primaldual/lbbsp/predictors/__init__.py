"""Online speed predictors for LB-BSP's CPU rule, each fed at every barrier with what it measured.

Interface: ``observe(speed, exogenous=None)`` at each barrier (the measured per-sample speeds of the iteration
that just ended, and the CPU/memory readings if any), then ``predict()`` -> the speeds for the next iteration
(``None`` until there is data; callers then keep equal batches). Only proportions matter to the CPU rule.

* :mod:`.point` -- last value, EWMA, equal, ARX and NARX;
* :mod:`.regression` -- state-aware ARX (``sarx``) and readings regression (``rreg``);
* :mod:`.robust_lp` -- the scenario LPs (one-shot :func:`~.robust_lp.robust_shares`, warm :class:`~.robust_lp.ScenarioLp`);
* :mod:`.robust` -- predictors built on the scenario LP (``robust``, ``robust_changes``, around a point predictor);
* :mod:`.hazard` -- scenarios from learned moves and onsets of the slowness (``hazard``);
* :mod:`.select` -- the makespan-validated choice among a bank (``select``);
* :mod:`.registry` -- ``PREDICTORS`` and :func:`~.registry.make_predictor`, on top of all of them.
"""
