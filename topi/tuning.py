"""Which schedule config a tunable topi schedule uses (TVM's dispatch context).

A tunable schedule (conv2d, dense, matmul, ...) names its workload — a template name
and JSON-able parameters that rebuild the computation on its own — and asks
`config_for(template, params)`. Outside any context the answer is None: the
schedule's own default (its heuristic's config). `use_configs(lookup)` installs a
function `lookup(template, params) -> config | None` for the calls inside it: the
best records of a tuning log (tc.compile(..., tuning_log=...)), or a recorder that
collects the workloads a model schedules (task extraction) and answers None.

topi does not know about tuning logs: autotune/ builds the lookups.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Lookup = Callable[[str, tuple], "dict | None"]

_LOOKUP: ContextVar[Lookup | None] = ContextVar("tilecraft_schedule_configs", default=None)


def workload_key(template: str, params) -> str:
    """The text that names a workload in tuning logs: `conv2d[1,64,56,56,...]`."""
    return template + json.dumps(list(params), separators=(",", ":"))


def config_for(template: str, params: tuple) -> dict | None:
    lookup = _LOOKUP.get()
    return None if lookup is None else lookup(template, tuple(params))


def configs_in_use() -> bool:
    """Whether a tuning context is set (`use_configs`): what it answers is outside
    anything a cache could key, so a compile under one is not cached whole."""
    return _LOOKUP.get() is not None


@contextmanager
def use_configs(lookup: Lookup | None) -> Iterator[None]:
    token = _LOOKUP.set(lookup)
    try:
        yield
    finally:
        _LOOKUP.reset(token)


def check_config(config: dict, knobs: dict[str, tuple], where: str) -> dict:
    """`config` if it sets every knob to an allowed value, else a ValueError naming
    the knob (a tuning log of another version, a hand-written config)."""
    for name, values in knobs.items():
        if name not in config:
            raise ValueError(f"{where}: the config has no knob '{name}'")
        value = config[name]
        allowed = [list(v) if isinstance(v, (list, tuple)) else v for v in values]
        if (list(value) if isinstance(value, (list, tuple)) else value) not in allowed:
            raise ValueError(f"{where}: knob '{name}' = {value!r} is not one of {allowed}")
    unknown = sorted(set(config) - set(knobs))
    if unknown:
        raise ValueError(f"{where}: unknown knob(s) {', '.join(unknown)}")
    return config
