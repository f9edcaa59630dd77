"""Batch-size-weighted gradient aggregation on real SGD (docs/papers.md, LB-BSP, [design]).

With disjoint local batches ``B_i`` of sizes ``x_i`` whose union ``B`` has X samples and local *mean*
gradients ``g_i``, the weighted aggregate ``sum_i (x_i / X) g_i`` equals ``(1/X) sum_{k in B} grad l_k``,
the gradient of one batch of size X (docs/papers.md, LB-BSP, an exact identity). The plain mean
``(1/n) sum_i g_i`` weights each sample by ``1 / (n x_i)`` instead and so differs whenever the
batches are unequal. The sampler follows docs/papers.md, LB-BSP: one global permutation per epoch, and each
iteration hands worker i a contiguous slice of length ``x_i^t`` of the next X indices, so that the
union is exactly the global batch a single-batch SGD run would use with the same seed.

Models: logistic regression (labels in {0, 1}) and least squares, in numpy, mean losses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("logistic", "least_squares")


@dataclass(frozen=True)
class RegressionData:
    """A synthetic data set: ``features`` (N, d) with a bias column, ``targets`` (N,)."""

    kind: str
    features: np.ndarray
    targets: np.ndarray

    @property
    def n_samples(self) -> int:
        return self.features.shape[0]


def synthetic_regression(kind: str = "logistic", samples: int = 2000, dimension: int = 5,
                         seed: int = 0) -> RegressionData:
    """Gaussian features plus a bias column; labels from a random linear model (Bernoulli or noisy)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    features = np.column_stack([rng.normal(size=(samples, dimension)), np.ones(samples)])
    truth = rng.normal(size=dimension + 1)
    score = features @ truth
    if kind == "logistic":
        targets = (rng.random(samples) < 1.0 / (1.0 + np.exp(-score))).astype(float)
    else:
        targets = score + rng.normal(0.0, 0.5, size=samples)
    return RegressionData(kind, features, targets)


def mean_gradient(kind: str, weights: np.ndarray, features: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Gradient of the mean loss over the given samples (what one worker computes locally)."""
    score = features @ weights
    if kind == "logistic":
        residual = 1.0 / (1.0 + np.exp(-score)) - targets
    elif kind == "least_squares":
        residual = score - targets
    else:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return features.T @ residual / features.shape[0]


def mean_loss(kind: str, weights: np.ndarray, features: np.ndarray, targets: np.ndarray) -> float:
    score = features @ weights
    if kind == "logistic":
        return float(np.mean(np.logaddexp(0.0, score) - targets * score))
    return float(0.5 * np.mean((score - targets) ** 2))


def weighted_aggregate(local_gradients, batch_sizes) -> np.ndarray:
    """LB-BSP aggregation ``sum_i (x_i / X) g_i`` over local mean gradients (rows)."""
    batch_sizes = np.asarray(batch_sizes, dtype=float)
    return (batch_sizes / batch_sizes.sum()) @ np.asarray(local_gradients)


def mean_aggregate(local_gradients, batch_sizes=None) -> np.ndarray:
    """BSP's plain mean ``(1/n) sum_i g_i``, right for equal batches only (``batch_sizes`` is ignored)."""
    return np.mean(np.asarray(local_gradients), axis=0)


AGGREGATIONS = {"weighted": weighted_aggregate, "mean": mean_aggregate}


def global_batches(n_samples: int, global_batch: int, iterations: int, seed: int) -> np.ndarray:
    """Indices of the global batch of each iteration, shape (iterations, X): consecutive slices of one
    permutation per epoch (docs/papers.md, LB-BSP); an iteration that crosses an epoch boundary continues into
    the next permutation."""
    rng = np.random.default_rng(seed)
    needed = iterations * global_batch
    epochs = -(-needed // n_samples)
    stream = np.concatenate([rng.permutation(n_samples) for _ in range(epochs)])
    return stream[:needed].reshape(iterations, global_batch)


def split_batch(indices: np.ndarray, batch_sizes) -> list[np.ndarray]:
    """Contiguous slices of the global batch, one per worker, of lengths ``batch_sizes``."""
    bounds = np.cumsum(np.concatenate([[0], np.asarray(batch_sizes, dtype=np.int64)]))
    if bounds[-1] != len(indices):
        raise ValueError(f"batch sizes sum to {bounds[-1]}, global batch has {len(indices)} samples")
    return [indices[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]


@dataclass(frozen=True)
class SgdTrajectory:
    """Weights after each step (row 0 = initial) and the full-data loss at each of them."""

    weights: np.ndarray
    losses: np.ndarray


def train_single_batch(data: RegressionData, global_batch: int, iterations: int, learning_rate: float,
                       seed: int = 0) -> SgdTrajectory:
    """Plain mini-batch SGD with batch X: the reference trajectory."""
    batches = global_batches(data.n_samples, global_batch, iterations, seed)
    weights = np.zeros(data.features.shape[1])
    history = [weights]
    for rows in batches:
        weights = weights - learning_rate * mean_gradient(data.kind, weights, data.features[rows], data.targets[rows])
        history.append(weights)
    return _trajectory(data, history)


def train_data_parallel(data: RegressionData, batch_schedule, learning_rate: float, aggregation: str = "weighted",
                        seed: int = 0) -> SgdTrajectory:
    """Data-parallel SGD: at iteration t worker i computes the mean gradient of its ``batch_schedule[t, i]``
    samples, the parameter server aggregates (``weighted`` or ``mean``) and takes one step.

    The global batch ``X = batch_schedule[t].sum()`` must be the same at every iteration (LB-BSP keeps
    it constant, docs/papers.md, LB-BSP), and the learning rate is the one of single-batch SGD with batch X.
    """
    schedule = np.asarray(batch_schedule, dtype=np.int64)
    totals = schedule.sum(axis=1)
    if np.any(totals != totals[0]):
        raise ValueError("the global batch must be constant across iterations")
    if np.any(schedule < 1):
        raise ValueError("every worker needs at least one sample (docs/papers.md, LB-BSP)")
    combine = AGGREGATIONS[aggregation]
    batches = global_batches(data.n_samples, int(totals[0]), len(schedule), seed)
    weights = np.zeros(data.features.shape[1])
    history = [weights]
    for rows, sizes in zip(batches, schedule):
        local = [mean_gradient(data.kind, weights, data.features[part], data.targets[part])
                 for part in split_batch(rows, sizes)]
        weights = weights - learning_rate * combine(np.array(local), sizes)
        history.append(weights)
    return _trajectory(data, history)


def _trajectory(data: RegressionData, history) -> SgdTrajectory:
    weights = np.array(history)
    losses = np.array([mean_loss(data.kind, w, data.features, data.targets) for w in weights])
    return SgdTrajectory(weights, losses)


@dataclass(frozen=True)
class AggregationCheck:
    """Largest absolute deviation of each data-parallel trajectory from single-batch SGD."""

    weighted_max_deviation: float
    mean_max_deviation: float
    final_loss_single: float
    final_loss_weighted: float
    final_loss_mean: float


def compare_aggregations(data: RegressionData, batch_schedule, learning_rate: float, seed: int = 0) -> AggregationCheck:
    """Run single-batch, weighted and plain-mean SGD on the same sample order and compare."""
    schedule = np.asarray(batch_schedule)
    single = train_single_batch(data, int(schedule[0].sum()), len(schedule), learning_rate, seed)
    weighted = train_data_parallel(data, schedule, learning_rate, "weighted", seed)
    mean = train_data_parallel(data, schedule, learning_rate, "mean", seed)
    return AggregationCheck(
        weighted_max_deviation=float(np.max(np.abs(weighted.weights - single.weights))),
        mean_max_deviation=float(np.max(np.abs(mean.weights - single.weights))),
        final_loss_single=float(single.losses[-1]),
        final_loss_weighted=float(weighted.losses[-1]),
        final_loss_mean=float(mean.losses[-1]),
    )
