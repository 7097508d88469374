"""`tilecraft-opt` as a user meets it: bad input gives exit code 1 and one
`file:line:col: error:` (or `tilecraft-opt: error:`) line on stderr, never a
Python traceback; good input round-trips with exit code 0."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tilecraft.registry import get_all_dialects

BIN_DIR = Path(sys.executable).parent

LOCATED_ERROR = re.compile(r"^\S+\.mlir:\d+:\d+: error: ", re.MULTILINE)
TOOL_ERROR = re.compile(r"^tilecraft-opt: error: ", re.MULTILINE)

GOOD = """\
func.func @add(%A: tensor<8xf32>, %B: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %b = te.read %B[%i] : tensor<8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}
"""


def opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN_DIR / "tilecraft-opt"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def write(tmp_path: Path, text: str, name: str = "input.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_user_error(result: subprocess.CompletedProcess, pattern: re.Pattern):
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    assert pattern.search(result.stderr), result.stderr


def test_good_input_round_trips(tmp_path):
    once = opt(write(tmp_path, GOOD))
    assert once.returncode == 0, once.stderr
    assert once.stderr == ""
    twice = opt(stdin=once.stdout)
    assert twice.returncode == 0, twice.stderr
    assert twice.stdout == once.stdout


def test_malformed_ir(tmp_path):
    path = write(tmp_path, GOOD.replace('(%i: "i")', "(%i: i)"))
    result = opt(path)
    assert_user_error(result, LOCATED_ERROR)
    # The te.compute axis list is on line 2; the bad token is the unquoted name.
    assert f"{path}:2:28: error: " in result.stderr


def test_verifier_error(tmp_path):
    path = write(tmp_path, GOOD.replace("te.read %A[%i]", "te.read %A[%i, %i]"))
    result = opt(path)
    assert_user_error(result, LOCATED_ERROR)
    assert (
        f"{path}:3:5: error: 'te.read' op: te.read of a rank-1 tensor takes 1 "
        "indices, not 2." in result.stderr
    )


def test_verifier_error_in_a_later_chunk(tmp_path):
    bad = GOOD.replace("te.read %A[%i]", "te.read %A[%i, %i]")
    path = write(tmp_path, GOOD + "// -----\n" + bad)
    result = opt(path, "--split-input-file")
    assert_user_error(result, LOCATED_ERROR)
    # Line numbers count from the top of the file, not of the chunk.
    assert f"{path}:13:5: error: 'te.read' op:" in result.stderr


def test_unknown_pass(tmp_path):
    result = opt(write(tmp_path, GOOD), "-p", "no-such-pass")
    assert_user_error(result, TOOL_ERROR)
    assert "no-such-pass" in result.stderr


@pytest.mark.parametrize(
    "pipeline", ["canonicalize{no-such-option=1}", "canonicalize{", "canonicalize}"]
)
def test_bad_pass_option(tmp_path, pipeline):
    result = opt(write(tmp_path, GOOD), "-p", pipeline)
    assert_user_error(result, TOOL_ERROR)


def test_missing_file(tmp_path):
    result = opt(str(tmp_path / "missing.mlir"))
    assert_user_error(result, TOOL_ERROR)
    assert "missing.mlir" in result.stderr


def test_directory(tmp_path):
    assert_user_error(opt(str(tmp_path)), TOOL_ERROR)


def test_unknown_extension(tmp_path):
    result = opt(write(tmp_path, GOOD, "input.txt"))
    assert_user_error(result, TOOL_ERROR)
    assert opt(write(tmp_path, GOOD, "input.txt"), "-f", "mlir").returncode == 0


def test_not_utf8(tmp_path):
    path = tmp_path / "binary.mlir"
    path.write_bytes(b"\xff\xfe\x00func")
    assert_user_error(opt(str(path)), TOOL_ERROR)


def test_help_lists_tilecraft():
    result = opt("--help")
    assert result.returncode == 0
    dialects = next(line for line in result.stdout.splitlines() if line.startswith("tilecraft dialects:"))
    assert dialects == "tilecraft dialects: " + ", ".join(sorted(get_all_dialects()))
