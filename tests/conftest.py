"""Shared test settings: hypothesis is derandomised so every run checks the same examples on any machine."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "primaldual",
    derandomize=True,
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("primaldual")
