"""Views of what the schedulers did.

- :mod:`primaldual.views.style`: one colour and marker per scheduler for every figure, and :func:`save`;
- :mod:`primaldual.views.gantt`: ``primaldual plot schedule``, a Gantt chart of one schedule;
- :mod:`primaldual.views.sweep_figures`: ratio distributions and utility-versus-knob curves from sweep records;
- :mod:`primaldual.views.distribution_figures`: JCT, fairness, utility and utilisation distributions from
  records that carry per-job outcomes;
- :mod:`primaldual.views.lbbsp_figures` and :mod:`primaldual.views.trace_figures`: ``reproduce``'s LB-BSP figure
  and its JCT and slowdown CDFs on real arrivals.

Views only draw: the numbers come from lower layers (:mod:`primaldual.evaluation.outcomes` per job,
:mod:`primaldual.sweep.summary` and :mod:`primaldual.sweep.distributions` over records), and nothing below
imports a view. matplotlib is imported on demand, so reading numbers does not load it.
"""

# The README's example still imports job_outcomes from here; once it reads primaldual.evaluation.outcomes
# these three names go (the numbers are not a view's).
from primaldual.evaluation.outcomes import JobOutcomes, job_outcomes, utilisation_over_time

__all__ = ["JobOutcomes", "job_outcomes", "utilisation_over_time"]
