"""The cost model: XGBoost ranking candidates by their loop features.

What the search needs is an order, not a time: which configs of a workload are
likely faster. So the model learns with a pairwise rank objective (`rank:pairwise`),
each workload a query group, the label a throughput score (the workload's best
measured cost divided by this one's: 1 for the best, toward 0 for slow ones, 0 for
errors), as AutoTVM's XGBTuner does. It trains online: `fit` again after each batch
of measurements, on everything measured so far, plus (transfer) what earlier tuning
logs of other workloads hold, given as extra (features, costs) groups.

`predict(features)` gives scores, higher = expected faster; only their order within
a workload means anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


class RankModel:
    def __init__(self, rounds: int = 60, seed: int = 0):
        self.rounds, self.seed = rounds, seed
        self.booster = None

    @staticmethod
    def labels(costs: Sequence[float]) -> np.ndarray:
        """Throughput relative to the group's best (0 for failed, inf-cost candidates)."""
        finite = [c for c in costs if math.isfinite(c) and c > 0]
        best = min(finite, default=1.0)
        return np.array([best / c if math.isfinite(c) and c > 0 else 0.0 for c in costs], dtype=np.float32)

    def fit(self, groups: Sequence[tuple[np.ndarray, Sequence[float]]]) -> RankModel:
        """Train on groups of (features [n, LENGTH], costs [n]) — one group per workload."""
        import xgboost as xgb

        xs, ys, sizes = [], [], []
        for x, costs in groups:
            if len(costs) < 2:
                continue  # a ranking needs pairs
            xs.append(np.asarray(x, dtype=np.float32))
            ys.append(self.labels(costs))
            sizes.append(len(costs))
        if not xs:
            self.booster = None
            return self
        data = xgb.DMatrix(np.concatenate(xs), label=np.concatenate(ys))
        data.set_group(sizes)
        params = {"objective": "rank:pairwise", "eta": 0.3, "max_depth": 6, "min_child_weight": 1,
                  "subsample": 1.0, "seed": self.seed, "nthread": 1, "verbosity": 0}  # fmt: skip
        self.booster = xgb.train(params, data, num_boost_round=self.rounds)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Scores of candidates (higher: expected faster); zeros before any training."""
        x = np.asarray(x, dtype=np.float32)
        if self.booster is None:
            return np.zeros(len(x), dtype=np.float32)
        import xgboost as xgb

        return self.booster.predict(xgb.DMatrix(x))
