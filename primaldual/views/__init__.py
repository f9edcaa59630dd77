"""Views of what the schedulers did.

- :mod:`primaldual.evaluation.outcomes`: per-job outcomes of a schedule (:func:`job_outcomes`) and the cluster's
  utilisation per slot (:func:`utilisation_over_time`): numbers only, no matplotlib;
- :mod:`primaldual.views.style`: one scheduler order, colour and marker for every figure;
- :mod:`primaldual.views.gantt`: ``primaldual plot schedule``, a Gantt chart of one schedule;
- :mod:`primaldual.views.sweep_figures`: ratio distributions and utility-versus-knob curves from sweep records;
- :mod:`primaldual.views.distribution_figures`: JCT, fairness, utility and utilisation distributions from
  records that carry per-job outcomes, and the same numbers for ``--json``.

The modules that draw import matplotlib on demand, so reading numbers does not load it.
"""

from primaldual.evaluation.outcomes import JobOutcomes, job_outcomes, utilisation_over_time

__all__ = ["JobOutcomes", "job_outcomes", "utilisation_over_time"]
