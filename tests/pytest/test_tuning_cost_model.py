"""The rank cost model (autotune/cost_model.py): it learns the order of candidates
from their features, carries over to an unseen workload (transfer), and treats
failed candidates as the slowest."""

from __future__ import annotations

import math

import numpy as np

from tilecraft.autotune.cost_model import RankModel

RNG = np.random.default_rng(4)


def synthetic(n, shift=0.0):
    """Candidates whose cost depends on a few features (and not on the others)."""
    x = RNG.random((n, 12)).astype(np.float32)
    cost = 1.0 + 3.0 * (x[:, 0] - 0.3) ** 2 + 2.0 * x[:, 3] * x[:, 5] + shift + 0.05 * RNG.random(n)
    return x, list(cost)


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_the_model_ranks_unseen_candidates_and_transfers_between_workloads():
    train = [synthetic(120), synthetic(120, shift=0.5)]
    model = RankModel().fit(train)
    x, cost = synthetic(200, shift=1.0)  # a workload it has not seen
    scores = model.predict(x)
    assert spearman(scores, -np.array(cost)) > 0.7  # higher score = faster
    best_predicted = np.argsort(-scores)[:10]
    assert min(np.array(cost)[best_predicted]) <= np.quantile(cost, 0.1)
    untrained = RankModel().predict(x)
    assert not untrained.any()


def test_failed_candidates_are_labelled_slowest():
    labels = RankModel.labels([2.0, 1.0, math.inf, 4.0])
    assert list(labels) == [0.5, 1.0, 0.0, 0.25]
    assert list(RankModel.labels([math.inf, math.inf])) == [0.0, 0.0]
