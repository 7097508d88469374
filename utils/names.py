"""Valid SSA value names (`%name`) made from user names (ONNX tensors, te tensors)."""

from __future__ import annotations

import re


def ssa_name(text: str) -> str | None:
    """`text` as a name xDSL prints: characters outside [A-Za-z0-9_$.-] become `_`, a
    leading digit gets a `v` before it; None for an empty name (printed as a number)."""
    if not text:
        return None
    name = re.sub(r"[^A-Za-z0-9_$.-]", "_", text)
    return f"v{name}" if name[0].isdigit() else name
