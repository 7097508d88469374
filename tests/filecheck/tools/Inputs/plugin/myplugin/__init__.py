"""myplugin: a small tilecraft plugin (docs/guide/extending.md).

- `myplugin.dialect`: the `myplugin` dialect, one graph-level op
  `myplugin.scaled_relu` (`alpha * max(x, 0)`), and its te strategy;
- `myplugin.scale_relus`: the pass `scale-relus{alpha=...}`, a rewrite pattern
  turning `graph.relu` into `myplugin.scaled_relu`;
- `myplugin.analysis`: the analysis `scaled-relus`, registered when the plugin
  loads (`tilecraft-analyze --analysis scaled-relus`).

The package declares this universe under the `xdsl.universe` entry point
(`myplugin-0.1.0.dist-info/entry_points.txt`; in a pyproject.toml:
`[project.entry-points."xdsl.universe"] myplugin = "myplugin:UNIVERSE"`), which is
how `tilecraft-opt` finds it. Both are loaded lazily, like tilecraft's own.
"""

from xdsl.universe import Universe

from myplugin import analysis  # noqa: F401 - registers the analysis scaled-relus


def _dialect():
    from myplugin.dialect import MYPLUGIN

    return MYPLUGIN


def _scale_relus():
    from myplugin.scale_relus import ScaleRelusPass

    return ScaleRelusPass


UNIVERSE = Universe(
    all_dialects={"myplugin": _dialect},
    all_passes={"scale-relus": _scale_relus},
)
