"""Real synchronous data-parallel SGD with K worker processes: BSP vs LB-BSP in wall-clock ([design]).

Data and model: scikit-learn's bundled handwritten digits (``sklearn.datasets.load_digits``: 1,797 8x8
images, 10 classes), pixels scaled to [0, 1] plus a bias column; multinomial logistic regression
(softmax, mean cross-entropy) in numpy.

Each iteration the parameter server (this process) sends the weights and a contiguous slice of the next
global batch of X samples to each worker (one permutation per epoch, docs/papers.md, LB-BSP, via
:func:`primaldual.lbbsp.aggregation.global_batches` and ``split_batch``); every worker computes the mean
gradient of its slice and the server combines them with the batch-size-weighted mean of
:func:`primaldual.lbbsp.aggregation.weighted_aggregate`, so both methods follow the *same* SGD trajectory
as one batch of X (docs/papers.md, LB-BSP): LB-BSP changes only who computes what.

**Stragglers are emulated, not real contention** (the machine is shared): worker k sleeps, after its
real gradient computation, ``per_sample_seconds * x_k * slowdown[t, k]`` seconds, where
``slowdown[t, k] = m[t, k] / min_j m[t, j]`` replays trace worker k's mini-batch time ``m`` relative to
the fastest of the K replayed workers at that iteration, and worker 0 is additionally slowed by
``straggler_factor`` (one persistent straggler, e.g. a co-located job). The sleep is proportional to the
batch, i.e. the linear time law of :mod:`primaldual.lbbsp.replay`. LB-BSP's CPU rule sees only what a
worker measures: its batch and its compute time (gradient plus sleep).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import dataclass

import numpy as np

from primaldual.lbbsp.aggregation import global_batches, split_batch, weighted_aggregate
from primaldual.lbbsp.cpu import equal_batches, proportional_batches
from primaldual.lbbsp.predictors.registry import make_predictor
from primaldual.lbbsp.traces import WorkerTrace

METHODS = ("bsp", "lbbsp")


def load_digits_data() -> tuple[np.ndarray, np.ndarray]:
    """Features (N, 65) in [0, 1] with a bias column, and integer labels (N,)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    features = np.column_stack([digits.data / 16.0, np.ones(len(digits.data))])
    return features, digits.target.astype(np.int64)


def softmax_gradient(weights: np.ndarray, features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Gradient of the mean cross-entropy over the given samples; weights (d, classes)."""
    scores = features @ weights
    scores -= scores.max(axis=1, keepdims=True)
    probabilities = np.exp(scores)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    probabilities[np.arange(len(labels)), labels] -= 1.0
    return features.T @ probabilities / len(labels)


def cross_entropy(weights: np.ndarray, features: np.ndarray, labels: np.ndarray) -> float:
    scores = features @ weights
    top = scores.max(axis=1, keepdims=True)
    log_normaliser = top[:, 0] + np.log(np.exp(scores - top).sum(axis=1))
    return float(np.mean(log_normaliser - scores[np.arange(len(labels)), labels]))


def _worker(connection, parent: int) -> None:
    """Worker process: gradient of its slice, then the emulated straggling sleep; reports compute time."""
    from primaldual.backends.processes import exit_with_parent

    exit_with_parent(parent)
    features, labels = connection.recv()  # sent by the server: children never import scikit-learn
    while True:
        message = connection.recv()
        if message is None:
            return
        weights, rows, sleep_seconds = message
        started = time.perf_counter()
        gradient = softmax_gradient(weights, features[rows], labels[rows])
        time.sleep(sleep_seconds)
        connection.send((gradient, time.perf_counter() - started))


@dataclass(frozen=True)
class TrainingRun:
    """One method's run: wall-clock seconds after each iteration, full-data loss after each, batches."""

    method: str
    elapsed_seconds: np.ndarray
    losses: np.ndarray
    batches: np.ndarray

    def time_to_loss(self, target: float) -> float | None:
        reached = np.nonzero(self.losses <= target)[0]
        return float(self.elapsed_seconds[reached[0]]) if reached.size else None


def straggler_slowdowns(trace: WorkerTrace, workers: int, iterations: int, straggler_factor: float) -> np.ndarray:
    """``slowdown[t, k]`` of the module docstring (trace iterations wrap around if the run is longer)."""
    times = trace.times[np.arange(iterations) % trace.n_iterations][:, np.arange(workers) % trace.n_workers]
    slowdown = times / times.min(axis=1, keepdims=True)
    slowdown[:, 0] *= straggler_factor
    return slowdown


def train(method: str, workers: int, iterations: int, slowdown: np.ndarray, global_batch: int = 256,
          per_sample_seconds: float = 0.002, learning_rate: float = 0.5, seed: int = 0,
          predictor: str = "select") -> TrainingRun:
    """Run ``iterations`` synchronous SGD steps with ``workers`` spawned processes."""
    features, labels = load_digits_data()
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    try:
        for _ in range(workers):
            ours, theirs = context.Pipe()
            process = context.Process(target=_worker, args=(theirs, os.getpid()), daemon=True)
            process.start()
            pipes.append(ours)
            processes.append(process)
            ours.send((features, labels))
        return _loop(method, pipes, features, labels, iterations, slowdown, global_batch, per_sample_seconds,
                     learning_rate, seed, predictor)
    finally:
        for pipe in pipes:
            try:
                pipe.send(None)
            except (BrokenPipeError, OSError):
                pass
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()


def _loop(method, pipes, features, labels, iterations, slowdown, global_batch, per_sample_seconds,
          learning_rate, seed, predictor) -> TrainingRun:
    workers = len(pipes)
    weights = np.zeros((features.shape[1], int(labels.max()) + 1))
    model = make_predictor(predictor, workers, seed=seed) if method == "lbbsp" else None
    order = global_batches(len(labels), global_batch, iterations, seed)
    # Warm-up round trip (process start-up and imports) outside the timed loop, same for both methods.
    for pipe in pipes:
        pipe.send((weights, order[0][:1], 0.0))
    for pipe in pipes:
        pipe.recv()
    elapsed, losses, batches = np.empty(iterations), np.empty(iterations), np.empty((iterations, workers), int)
    equal = equal_batches(workers, global_batch)
    started = time.perf_counter()
    for t in range(iterations):
        guess = None if model is None else model.predict()
        batch = equal if guess is None else proportional_batches(guess, global_batch)
        for k, (pipe, rows) in enumerate(zip(pipes, split_batch(order[t], batch))):
            pipe.send((weights, rows, per_sample_seconds * batch[k] * slowdown[t, k]))
        results = [pipe.recv() for pipe in pipes]
        local = np.array([gradient.ravel() for gradient, _ in results])
        weights = weights - learning_rate * weighted_aggregate(local, batch).reshape(weights.shape)
        if model is not None:
            model.observe(batch / np.array([seconds for _, seconds in results]), None)
        elapsed[t] = time.perf_counter() - started
        losses[t], batches[t] = cross_entropy(weights, features, labels), batch
    return TrainingRun(method, elapsed, losses, batches)


def compare(workers: int, iterations: int, trace: WorkerTrace, straggler_factor: float = 2.0,
            global_batch: int = 256, per_sample_seconds: float = 0.002, seed: int = 0) -> dict:
    """BSP and LB-BSP on the same data order and straggler replay; JSON-ready figures."""
    slowdown = straggler_slowdowns(trace, workers, iterations, straggler_factor)
    runs = {m: train(m, workers, iterations, slowdown, global_batch, per_sample_seconds, seed=seed) for m in METHODS}
    target = float(max(run.losses[-1] for run in runs.values()))  # the worse final loss: both reach it
    bsp_time, lbbsp_time = runs["bsp"].time_to_loss(target), runs["lbbsp"].time_to_loss(target)
    return {
        "dataset": "sklearn load_digits (1797 samples, 64 features, 10 classes)",
        "model": "multinomial logistic regression",
        "workers": workers, "iterations": iterations, "global_batch": global_batch,
        "straggle_trace": trace.name, "straggler_factor": straggler_factor,
        "per_sample_seconds": per_sample_seconds,
        "wall_clock_seconds": {m: float(r.elapsed_seconds[-1]) for m, r in runs.items()},
        "seconds_per_iteration": {m: float(r.elapsed_seconds[-1] / iterations) for m, r in runs.items()},
        "final_loss": {m: float(r.losses[-1]) for m, r in runs.items()},
        "target_loss": target,
        "time_to_target_seconds": {"bsp": bsp_time, "lbbsp": lbbsp_time},
        "time_to_target_speedup": bsp_time / lbbsp_time if bsp_time and lbbsp_time else None,
        "max_loss_difference_per_iteration": float(np.max(np.abs(runs["bsp"].losses - runs["lbbsp"].losses))),
        "loss_curves": {m: {"seconds": r.elapsed_seconds.tolist(), "loss": r.losses.tolist()} for m, r in runs.items()},
        "final_batch": {m: r.batches[-1].tolist() for m, r in runs.items()},
    }
