"""The paper's baselines: FIFO, DRF, RRH and Dorm."""
