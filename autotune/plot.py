"""Tuning curves: the best GFLOP/s found so far against the number of trials.

`best_so_far(records, flops)` reads a task's measurements in log order (the order
they were made, across resumed runs) and gives, after each trial, the best GFLOP/s
of the trials up to it; a failed trial (error, timeout) counts as a trial that found
nothing. `curve(log, template, params)` does that for one workload of a log
(`measurements`: its configs' GFLOP/s in log order, each config once).

`plot_curves(panels, path)` writes a PNG (matplotlib, Agg backend: no display
needed), one subplot per task, each with the model-guided and the random search's
curves and a horizontal line at the untuned default schedule's GFLOP/s: how many
trials each search needs to beat the default and how close it gets to the best.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tilecraft.autotune.records import Record, TuningLog, config_key
from tilecraft.autotune.templates import get_template, workload_key


def best_so_far(records: Iterable[Record], flops: float) -> list[float]:
    """Best GFLOP/s after each measurement of `records` (one workload's, in log order)."""
    out, best = [], 0.0
    for r in records:
        if r.kind != "measure":
            continue
        if math.isfinite(r.cost) and r.cost > 0:
            best = max(best, flops / r.cost / 1e9)
        out.append(best)
    return out


def measurements(log: TuningLog, template: str, params: Sequence) -> list[float]:
    """GFLOP/s of each config of one workload in `log`, in log order (0 for an
    error); a config measured twice (two runs that did not resume from each
    other) counts once, at its first measurement."""
    t = get_template(template)
    key = workload_key(template, params)
    flops = t.flops(*params)
    seen, out = set(), []
    for r in log.records():
        if r.kind != "measure" or r.workload != key or r.target != t.target:
            continue
        k = config_key(r.config)
        if k not in seen:
            seen.add(k)
            out.append(flops / r.cost / 1e9 if math.isfinite(r.cost) and r.cost > 0 else 0.0)
    return out


def curve(log: TuningLog, template: str, params: Sequence) -> list[float]:
    """The best-so-far curve of one workload's measurements in `log` (`measurements`)."""
    return list(itertools.accumulate(measurements(log, template, params), max))


# Model-guided runs (several seeds) in blues, random search in oranges, so one
# search's runs read as one family and never share the other's colour.
_FAMILIES = {"model-guided": ("tab:blue", "navy", "tab:cyan", "slateblue"),
             "random": ("tab:orange", "darkred", "goldenrod")}  # fmt: skip


def _curve_colors(labels: Sequence[str]) -> dict[str, str]:
    """A colour per curve label: the k-th label of a family ("model-guided (seed 1)"
    is of "model-guided") takes that family's k-th colour; other labels grey shades."""
    out, used = {}, {}
    for label in labels:
        family = next((f for f in _FAMILIES if label.startswith(f)), None)
        palette = _FAMILIES.get(family, ("dimgray", "darkgray", "black"))
        k = used.get(family, 0)
        used[family] = k + 1
        out[label] = palette[k % len(palette)]
    return out


@dataclass
class Panel:
    """One task's curves: `curves` maps a label ("model-guided", "random") to its
    best-so-far GFLOP/s per trial; `default` is the untuned schedule's GFLOP/s."""

    title: str
    curves: dict[str, list[float]] = field(default_factory=dict)
    default: float | None = None


def plot_curves(panels: Sequence[Panel], path: str | os.PathLike, *, title: str | None = None,
                log_x: bool = False) -> Path:  # fmt: skip
    """A PNG at `path` with one subplot per panel (in a grid of up to 3 columns);
    `log_x` for curves of very different lengths (64 guided against 1000 random)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    if not panels:
        raise ValueError("plot_curves needs at least one panel")
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.0 * columns, 3.6 * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        colors = _curve_colors(list(panel.curves))
        for label, values in panel.curves.items():
            if values:
                ax.plot(range(1, len(values) + 1), values, label=label, color=colors[label], drawstyle="steps-post")
        if panel.default is not None and panel.default > 0:
            ax.axhline(panel.default, color="gray", linestyle="--", label="untuned default")
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel("trials")
        if log_x:
            ax.set_xscale("log")
        ax.set_ylabel("best GFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
