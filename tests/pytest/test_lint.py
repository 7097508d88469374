"""The code passes the linter as pyproject.toml configures it ([tool.ruff]): ruff,
over the package, the tests, the benchmarks and the examples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *args],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip


def test_the_tree_is_clean():
    result = ruff(".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_configuration_is_the_one_applied(tmp_path):
    """An unused import fails under the project's settings: the check above is real."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    result = ruff("--config", str(ROOT / "pyproject.toml"), str(bad))
    assert result.returncode == 1 and "F401" in result.stdout, result.stdout + result.stderr
