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


@contextmanager
def use_configs(lookup: Lookup | None) -> Iterator[None]:
    token = _LOOKUP.set(lookup)
    try:
        yield
    finally:
        _LOOKUP.reset(token)
