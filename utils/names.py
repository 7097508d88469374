"""SSA name hints from user-given names.

Tensor, axis and argument names come from users (te.compute "my out", an ONNX
input "input:0", an argument named with quotes) and may hold any character;
xDSL accepts only `[A-Za-z0-9_$.-]` in a name hint, not starting with a digit,
and raises on anything else. A valid name is kept as it is. Every place that turns a user's name into a hint
goes through `name_hint`, so an odd name changes how the IR is printed, never
whether it compiles.
"""

from __future__ import annotations

import re

_INVALID = re.compile(r"[^A-Za-z0-9_$.-]")


def name_hint(name: str | None) -> str | None:
    """A valid SSA name hint that reads like `name` (None for no name)."""
    if not name:
        return None
    clean = _INVALID.sub("_", name)
    return f"v{clean}" if clean[0].isdigit() else clean
