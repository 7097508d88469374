"""tilecraft as a user who installs it (`pip install .`, not editable) gets it: the
package list in pyproject.toml names every package of the source tree, and the
wheel, installed into a fresh virtual environment, runs every console script and
compiles.

The wheel test is marked `slow` (`python3 tasks.py test --quick` skips it). It needs
no network: the wheel is built with the setuptools of the project's environment
(`--no-build-isolation`, the test extras), installed without its dependencies, and
the new environment finds those in the project's environment through a `.pth` file
written after the install (so pip never sees, nor touches, the editable install).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository root is the package `tilecraft`
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Directories that are not part of the package, pruned from the walks below.
NOT_PACKAGED = {"tests", "build", "dist", "__pycache__"}

TE_ADD = """\
func.func @add(%A: tensor<64xf32>, %B: tensor<64xf32>) -> tensor<64xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<64xf32> {
    %a = te.read %A[%i] : tensor<64xf32>
    %b = te.read %B[%i] : tensor<64xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<64xf32>
}
"""

# In the installed environment: tilecraft comes from it, a model compiles with a
# tuning log (tilecraft.autotune), and the accelerator's default spec (package data) loads.
COMPILE = """\
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
import tilecraft as tc
from tilecraft.backends.accel.spec import default_spec

assert tc.__file__.startswith(sys.prefix), tc.__file__
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
open("empty.jsonl", "w").close()
compiled = tc.compile(model, tuning_log="empty.jsonl")
data = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
np.testing.assert_array_equal(compiled(data), np.maximum(data, 0))
default_spec()
print("compiled")
"""


def packages_in(root: Path) -> set[str]:
    """The dotted names of the packages under `root` (the package `tilecraft`):
    every directory holding an __init__.py, outside tests/ and hidden directories."""
    found = set()
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in NOT_PACKAGED and not d.startswith(".")]
        if "__init__.py" in files:
            found.add(".".join(("tilecraft", *Path(directory).relative_to(root).parts)))
    return found


def test_pyproject_lists_every_package():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = packages_in(ROOT)
    assert not found - listed, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"
    assert not listed - found, f"pyproject.toml lists packages that do not exist: {sorted(listed - found)}"


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, argv))}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.slow
def test_the_wheel_installs_and_runs(tmp_path):
    # Build from a copy, so the build leaves nothing in the working tree.
    source = tmp_path / "source"
    shutil.copytree(
        ROOT, source, ignore=shutil.ignore_patterns(".*", "*.egg-info", "bench", "docs", "examples", *NOT_PACKAGED)
    )
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", dist, source], cwd=tmp_path)
    (wheel,) = dist.glob("tilecraft-*.whl")

    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    _run([*pip, "--python", python, "install", "--no-deps", "--no-index", wheel], cwd=tmp_path)
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # The dependencies: the project environment's packages, after the new environment's own.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "tilecraft-test-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")

    # Every package of the source is in the wheel.
    assert packages_in(purelib / "tilecraft") == packages_in(ROOT)

    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean["TILECRAFT_CACHE_DIR"] = "0"  # nothing written outside tmp_path
    work = tmp_path / "work"  # not the repository: `tilecraft` must come from the environment
    work.mkdir()
    for script in PYPROJECT["project"]["scripts"]:
        result = _run([env / "bin" / script, "--help"], cwd=work, env=clean)
        assert result.stdout.startswith(f"usage: {script} "), result.stdout
        assert _run([env / "bin" / script, "--version"], cwd=work, env=clean).stdout.startswith(
            f"{script} from tilecraft "
        )
    (work / "add.mlir").write_text(TE_ADD)
    run = _run([env / "bin" / "tilecraft-run", "add.mlir", "--entry", "add", "--check"], cwd=work, env=clean)
    assert "check: OK" in run.stdout
    assert _run([python, "-c", COMPILE], cwd=work, env=clean).stdout == "compiled\n"
