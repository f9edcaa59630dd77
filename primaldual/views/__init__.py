"""Views of what the schedulers did: per-job outcomes and utilisation (:mod:`primaldual.views.distributions`).

The modules that draw (matplotlib) are imported on demand, so reading numbers does not load matplotlib.
"""

from primaldual.views.distributions import JobOutcomes, job_outcomes, utilisation_over_time

__all__ = ["JobOutcomes", "job_outcomes", "utilisation_over_time"]
