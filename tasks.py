#!/usr/bin/env python3
"""Project tasks that need nothing but Python 3: `python3 tasks.py test|demo`.

Each task first makes sure `.venv` exists and holds tilecraft installed in
editable mode with its test extras; the install is redone only when
pyproject.toml changed since the last one (its hash is stamped into .venv).

- `test`: pytest (tests/pytest, one worker per core), then lit (tests/filecheck) on two workers;
  the last line printed is "N passed, M failed" over both; exit 1 on any failure,
  and when either collected no tests (pytest's exit 5 is a failure). `test --quick`
  is the inner loop: it skips the tests marked `slow` (the ONNX conformance chunks,
  the wheel install; `pytest --markers` lists the marker).
- `demo`: run examples/demo.py with the project's interpreter.
- `docs`: regenerate the reference pages of docs/reference/ from the code.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import venv
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".tilecraft-install-stamp"


def venv_bin(name: str) -> Path:
    scripts = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / scripts / f"{name}{suffix}"


def run(cmd: list[str | Path], **kwargs) -> int:
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kwargs)


def install_hash() -> str:
    """What the install depends on: pyproject.toml and the interpreter it is for."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def ensure_venv() -> Path:
    """Create .venv and install tilecraft into it unless already up to date."""
    python = venv_bin("python")
    if not python.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = install_hash()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return python
    print("installing tilecraft (editable) with test extras", flush=True)
    if run([python, "-m", "pip", "install", "-e", ".[test]"]) != 0:
        sys.exit("tasks.py: error: pip install failed (see above)")
    STAMP.write_text(wanted + "\n")
    return python


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
        )

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped


def junit_counts(path: Path) -> Counts | None:
    """Count the test cases of a JUnit XML report (pytest's or lit's)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    counts = Counts()
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            counts.failed += 1
        elif case.find("skipped") is not None:
            counts.skipped += 1
        else:
            counts.passed += 1
    return counts


def task_test(python: Path, quick: bool = False) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        pytest_xml = Path(tmp) / "pytest.xml"
        lit_xml = Path(tmp) / "lit.xml"

        pytest_rc = run(
            [
                python,
                "-m",
                "pytest",
                "tests/pytest",
                # One worker per core (at most 4). Tests go to whichever worker is
                # free, except a module marked `xdist_group` (one whose module
                # fixture compiles models), which stays on one worker so the
                # fixture is computed once.
                "-n",
                str(min(4, os.cpu_count() or 1)),
                "--dist",
                "loadgroup",
                *(["-m", "not slow"] if quick else []),
                # The slowest tests, so a slow one that lands is seen.
                "--durations=15",
                # A test module that fails to import still lets the others run.
                "--continue-on-collection-errors",
                f"--junitxml={pytest_xml}",
            ]
        )
        pytest_counts = junit_counts(pytest_xml) or Counts()
        if pytest_rc != 0 and pytest_counts.failed == 0:
            # pytest stopped before reporting (usage or internal error), or
            # collected nothing (exit 5): either way the suite did not run.
            pytest_counts.failed += 1

        lit_rc = run(
            [
                venv_bin("lit"),
                "-j2",
                "-v",
                f"--xunit-xml-output={lit_xml}",
                "tests/filecheck",
            ]
        )
        lit_counts = junit_counts(lit_xml) or Counts()
        if lit_rc != 0 and lit_counts.failed == 0:
            # lit found no tests or could not run them.
            lit_counts.failed += 1

    # Both must have run tests and passed them all: pytest's exit 5 (nothing
    # collected) is a failure, as is lit finding no tests.
    ok = pytest_rc == 0 and lit_rc == 0 and pytest_counts.passed > 0 and lit_counts.passed > 0
    total = pytest_counts + lit_counts
    print(
        f"pytest: {pytest_counts.passed} passed, {pytest_counts.failed} failed, "
        f"{pytest_counts.skipped} skipped (exit {pytest_rc}); "
        f"lit: {lit_counts.passed} passed, {lit_counts.failed} failed, "
        f"{lit_counts.skipped} unsupported (exit {lit_rc})"
    )
    if not ok and total.failed == 0:
        total.failed = 1
    print(f"{total.passed} passed, {total.failed} failed")
    return 0 if ok else 1


def task_demo(python: Path) -> int:
    demo = ROOT / "examples" / "demo.py"
    if not demo.exists():
        print(
            f"tasks.py: error: {demo.relative_to(ROOT)} does not exist yet; "
            "there is no demo to run",
            file=sys.stderr,
        )
        return 1
    return run([python, demo])


def task_docs(python: Path) -> int:
    """Write the generated reference (docs/reference/) from the pass and dialect
    registries; tests/pytest/test_docs.py fails while it is stale."""
    return run([python, "-m", "tilecraft.tools.gen_docs"])


TASKS = {"test": task_test, "demo": task_demo, "docs": task_docs}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="with test: skip the tests marked slow (the ONNX conformance chunks, "
        "installing the wheel into a fresh environment)",
    )
    args = parser.parse_args()
    if args.quick and args.task != "test":
        parser.error("--quick goes with the test task")
    python = ensure_venv()
    if args.task == "test":
        return task_test(python, quick=args.quick)
    return TASKS[args.task](python)


if __name__ == "__main__":
    sys.exit(main())
