"""The packages pyproject.toml lists under [tool.basedpyright] pass pyright's basic
type checks (basedpyright, a pyright built with Node in its wheel).

The repository root is the package `tilecraft`, so a checker finds `tilecraft.*`
only through a directory of that name: the check runs in a temporary one linking
to the root, with the project's settings."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASEDPYRIGHT = Path(sys.executable).parent / "basedpyright"


def check(tmp_path: Path, include: list[str]) -> subprocess.CompletedProcess:
    """basedpyright over `include` (paths in `tmp_path`, where `tilecraft` is the root)."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["basedpyright"]
    (tmp_path / "tilecraft").symlink_to(ROOT, target_is_directory=True)
    config = settings | {"include": include, "extraPaths": [str(tmp_path)]}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    return subprocess.run(
        [str(BASEDPYRIGHT), "--project", str(tmp_path / "pyrightconfig.json"), "--pythonpath", sys.executable],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.slow
def test_the_checked_packages_are_clean(tmp_path):
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["basedpyright"]["include"]
    result = check(tmp_path, [f"tilecraft/{path}" for path in include])
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_the_checker_reports_a_type_error(tmp_path):
    """A wrong argument type fails under the project's settings: the check above is real."""
    (tmp_path / "bad.py").write_text("from tilecraft.utils.dtypes import numpy_dtype\n\nnumpy_dtype(3)\n")
    result = check(tmp_path, ["bad.py"])
    assert result.returncode == 1 and "reportArgumentType" in result.stdout, result.stdout + result.stderr
