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


def _opt_in_process(capsys, *args: str) -> str:
    """tilecraft-opt's stdout, run in this process (a process costs ~0.5 s)."""
    from tilecraft.tools import opt as opt_tool

    assert opt_tool.main(list(args)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_help_lists_tilecraft_passes_by_level_and_xdsls_apart(tmp_path, capsys):
    from xdsl.universe import XDSL_UNIVERSE

    from tilecraft.registry import get_all_passes, pass_groups

    epilog = _opt_in_process(capsys, "--help").split("tilecraft passes (-p)")[1]
    words = epilog.split()
    # Every pass of tilecraft once, group by group in pipeline order.
    listed = [w for w in words if w in get_all_passes()]
    assert listed == [name for group in pass_groups().values() for name in group]
    for group in pass_groups():
        assert f"  {group}:" in epilog
    # xDSL's passes are not listed (three it names as examples aside) ...
    xdsl_only = set(XDSL_UNIVERSE.all_passes) - {"canonicalize", "cse", "dce"}
    assert not xdsl_only & set(w.strip(",.()") for w in words)
    assert "--help-xdsl lists them" in " ".join(words)
    # ... but --help-xdsl does, and they still run.
    assert set(XDSL_UNIVERSE.all_passes) <= set(_opt_in_process(capsys, "--help-xdsl").split())
    assert "te.compute" in _opt_in_process(capsys, write(tmp_path, GOOD), "-p", "convert-scf-to-cf")


def test_version_is_tilecrafts(capsys):
    from importlib.metadata import version

    import tilecraft

    expected = f"tilecraft-opt from tilecraft {tilecraft.__version__}, on xDSL {version('xdsl')}\n"
    assert _opt_in_process(capsys, "-v") == expected
    # One version: the package's metadata (pyproject.toml) and tilecraft.__version__.
    assert version("tilecraft") == tilecraft.__version__


@pytest.mark.parametrize("tool", ["tilecraft-translate", "tilecraft-run", "tilecraft-import", "tilecraft-tune"])
def test_every_tool_has_version(tool, capsys):
    import tilecraft

    main, _ = _tool_mains()[tool]
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"{tool} from tilecraft {tilecraft.__version__}, on xDSL ")


def test_targets_are_tilecrafts(tmp_path, capsys):
    from tilecraft.tools import opt as opt_tool

    path = write(tmp_path, GOOD)
    assert "define void @add(" in _opt_in_process(capsys, path, "-t", "llvm")  # te lowered to loops, then LLVM IR
    assert opt_tool.main([path, "-t", "csll"]) == 1
    err = capsys.readouterr().err
    assert "tilecraft-opt: error: argument -t/--target: unknown target 'csll' (tilecraft's: mlir, llvm, asm, " in err


# -- one error handler (tools/errors.py): the same error reads the same in every tool --

def _tool_mains():
    from tilecraft.tools import import_model, opt, run, translate, tune

    return {
        "tilecraft-opt": (opt.main, []),
        "tilecraft-translate": (translate.main, []),
        "tilecraft-run": (run.main, ["--entry", "f"]),
        "tilecraft-import": (import_model.main, []),
        "tilecraft-tune": (tune.main, ["--trials", "1", "--log", "unused.jsonl"]),
    }


TOOL_NAMES = ["tilecraft-opt", "tilecraft-translate", "tilecraft-run", "tilecraft-import", "tilecraft-tune"]


def _run_main(tool: str, argv: list[str], capsys) -> tuple[int, str]:
    main, extra = _tool_mains()[tool]
    code = main([*argv, *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, err


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_missing_input_file_reads_the_same(tool, tmp_path, capsys):
    suffix = ".onnx" if tool in ("tilecraft-import", "tilecraft-tune") else ".mlir"
    missing = tmp_path / f"missing{suffix}"
    code, err = _run_main(tool, [str(missing)], capsys)
    assert code == 1
    assert err == f"{tool}: error: cannot read '{missing}': no such file\n"


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_directory_reads_the_same(tool, tmp_path, capsys):
    code, err = _run_main(tool, [str(tmp_path)], capsys)
    assert code == 1
    assert err == f"{tool}: error: cannot read '{tmp_path}': it is a directory\n"


@pytest.mark.parametrize(
    "tool, argv",
    [
        ("tilecraft-opt", ["{good}", "-o", "{out}"]),
        ("tilecraft-translate", ["{good}", "-o", "{out}"]),
        ("tilecraft-run", ["{good}", "--entry", "add", "--output", "{out}"]),
    ],
)
def test_unwritable_output_reads_the_same(tool, argv, tmp_path, capsys):
    from tilecraft.tools import opt, run, translate

    main = {"tilecraft-opt": opt.main, "tilecraft-translate": translate.main, "tilecraft-run": run.main}[tool]
    out = tmp_path / "no-such-dir" / "out"
    good = write(tmp_path, GOOD)
    assert main([a.format(good=good, out=out) for a in argv]) == 1
    assert capsys.readouterr().err == f"{tool}: error: cannot write '{out}': no such directory\n"


@pytest.mark.parametrize("tool", ["tilecraft-opt", "tilecraft-translate", "tilecraft-run"])
def test_not_utf8_reads_the_same(tool, tmp_path, capsys):
    path = tmp_path / "binary.mlir"
    path.write_bytes(b"func\xff")
    code, err = _run_main(tool, [str(path)], capsys)
    assert code == 1
    assert err == f"{tool}: error: the input is not UTF-8 text (invalid start byte at byte 4)\n"


def test_the_handler_words_each_kind_of_error(capsys):
    from xdsl.utils.exceptions import PassFailedException

    from tilecraft.tools.errors import UserError, run_tool
    from tilecraft.utils.diagnostics import OpError

    def raising(error):
        def body():
            raise error

        return body

    cases = [
        (UserError("bad"), 1, "prog: error: bad\n"),
        # Located diagnostics name their place themselves; the rest get the tool's name.
        (OpError(None, "'x.y' op: wrong"), 1, "<unknown>: error: 'x.y' op: wrong\n"),
        (PassFailedException("fuse-ops: no"), 1, "prog: error: fuse-ops: no\n"),
        (RecursionError(), 1, "prog: error: the input nests too deeply"),
        (KeyboardInterrupt(), 130, "prog: interrupted\n"),
        (RuntimeError("boom"), 2, "prog: internal error: RuntimeError: boom (rerun with --traceback and report it)\n"),
    ]
    for error, code, words in cases:
        assert run_tool("prog", raising(error), []) == code
        err = capsys.readouterr().err
        assert err.startswith(words), err
        assert "Traceback" not in err
    assert run_tool("prog", raising(RuntimeError("boom")), ["--traceback"]) == 2
    assert "Traceback" in capsys.readouterr().err
    assert run_tool("prog", lambda: None, []) == 0


def test_user_error_table_names_exceptions_that_exist():
    """The handler looks tilecraft's user-error types up by module and name (so a
    failing command imports neither onnx nor llvmlite): a moved or renamed class
    would silently turn its errors into internal errors."""
    import importlib

    from tilecraft.tools.errors import _USER_ERRORS, user_error_types

    for module, name in _USER_ERRORS:
        error_type = getattr(importlib.import_module(module), name)
        assert issubclass(error_type, Exception) and error_type.__module__ == module, (module, name)
        assert error_type in user_error_types()
    from tilecraft.frontends.onnx import OnnxImportError
    from tilecraft.tools.errors import run_tool

    def body():
        raise OnnxImportError("node 'n' (Foo): unsupported")

    assert run_tool("prog", body, []) == 1


def test_tune_tool_default_cutoff_is_the_tuners():
    from tilecraft.autotune.tuner import CUTOFF
    from tilecraft.tools import tune

    assert tune.CUTOFF == CUTOFF


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_tool_exits_1_on_a_bad_command_line_and_has_traceback(tool, capsys):
    main, extra = _tool_mains()[tool]
    try:
        code = main(["in.mlir", *extra, "--no-such-option"])
    except SystemExit as stop:  # argparse's exit, where the tool parses before its handler
        code = stop.code
    assert code == 1
    assert f"{tool}: error: unrecognized arguments: --no-such-option" in capsys.readouterr().err
    try:
        main(["--help"])
    except SystemExit as stop:
        assert stop.code == 0
    assert "--traceback" in capsys.readouterr().out


# -- one spelling of input shapes, one --tuning-log (tools/options.py) --------------


def test_input_shape_spellings():
    from tilecraft.tools.errors import UserError
    from tilecraft.tools.options import input_shapes, parse_input_shape

    assert parse_input_shape("x=1x3x224x224") == ("x", (1, 3, 224, 224))
    assert parse_input_shape("x=1,3,224,224") == ("x", (1, 3, 224, 224))
    assert parse_input_shape("in:0=4") == ("in:0", (4,))
    assert parse_input_shape("a=b=2x2") == ("a=b", (2, 2))  # the name ends at the last '='
    assert parse_input_shape("s=") == ("s", ())  # a scalar
    assert input_shapes(["x=1x4", "y=2,3"]) == {"x": (1, 4), "y": (2, 3)}
    for bad in ["x", "=1x4", "x=1xa", "x=0x4", "x=-1", "x=1x", "x=1,,2"]:
        with pytest.raises(UserError, match=re.escape(f"bad --input-shape '{bad}': write NAME=D1xD2x...")):
            parse_input_shape(bad)
    with pytest.raises(UserError, match="--input-shape gives input 'x' twice"):
        input_shapes(["x=1x4", "x=2x4"])


def test_every_tool_that_reads_a_model_spells_input_shape_alike(capsys):
    from tilecraft.tools import import_model, run, tune
    from tilecraft.tools.options import INPUT_SHAPE_HELP, INPUT_SHAPE_METAVAR, TUNING_LOG_HELP

    def option(parser, dest):
        return next((a for a in parser._actions if a.dest == dest), None)

    parsers = {"import": import_model.make_arg_parser(), "run": run.make_arg_parser(), "tune": tune.make_arg_parser()}
    for name, parser in parsers.items():
        action = option(parser, "input_shape")
        assert action is not None, name
        assert (action.metavar, action.help) == (INPUT_SHAPE_METAVAR, INPUT_SHAPE_HELP), name
    # --tuning-log wherever a model is compiled (tilecraft-tune writes the log: --log)
    assert option(parsers["run"], "tuning_log").help == TUNING_LOG_HELP
    from tilecraft.tools.opt import TilecraftOptMain

    with pytest.raises(SystemExit):
        TilecraftOptMain(["--help"])
    assert f"--tuning-log PATH {TUNING_LOG_HELP[:20]}" in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def dynamic_model(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dyn", [x], [y])
    path = tmp_path / "dynamic.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


@pytest.mark.parametrize("spelling", ["x=3x4", "x=3,4"])
def test_import_and_run_take_both_spellings(dynamic_model, tmp_path, spelling, capsys):
    import numpy as np

    from tilecraft.tools import import_model, run

    assert import_model.main([str(dynamic_model), "--input-shape", spelling]) == 0
    assert "tensor<3x4xf32>" in capsys.readouterr().out
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    argv = [str(dynamic_model), "--input-shape", spelling, "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out)]
    assert run.main(argv) == 0
    np.testing.assert_array_equal(np.load(out), np.maximum(x, 0))


def test_run_without_input_shape_names_the_option(dynamic_model, capsys):
    from tilecraft.tools import run

    assert run.main([str(dynamic_model)]) == 1
    assert capsys.readouterr().err.endswith("or the tools' --input-shape x=1x4\n")


def test_tune_takes_both_spellings(dynamic_model, tmp_path, capsys):
    from tilecraft.tools import tune

    for spelling in ["x=2x4", "x=2,4"]:
        argv = [str(dynamic_model), "--input-shape", spelling, "--trials", "1", "--log", str(tmp_path / "t.jsonl")]
        assert tune.main(argv) == 1  # the shape is taken; a lone relu has nothing to tune
        assert "nothing to tune in" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--input-shape", "x=4"], "--input-shape fixes the inputs of an ONNX model; an IR file has static shapes"),
        (["--tuning-log", "t.jsonl"], "--tuning-log applies to models (ONNX, or graph-level IR); @add is a te"),
    ],
)
def test_run_refuses_model_options_for_a_te_function(tmp_path, argv, words, capsys):
    from tilecraft.tools import run

    assert run.main([write(tmp_path, GOOD), "--entry", "add", *argv]) == 1
    assert capsys.readouterr().err == f"tilecraft-run: error: {words}" + (
        "\n" if words.endswith("shapes") else " or loop function, scheduled as written\n"
    )


def test_a_plugin_target_named_like_tilecrafts(monkeypatch, capsys):
    from xdsl.universe import Universe

    from tilecraft import registry
    from tilecraft.tools import opt as opt_tool

    clash = registry.Provider("myplugin", "myplugin:U", "myplugin 0.1", Universe(all_targets={"llvm": lambda: None}))
    monkeypatch.setattr(opt_tool, "plugins", lambda found=None: [clash])
    assert opt_tool.main(["--help"]) == 1
    assert capsys.readouterr().err == (
        "tilecraft-opt: error: target 'llvm' is defined twice, by tilecraft and by 'myplugin' "
        "(package myplugin 0.1, myplugin:U); uninstall the plugin or rename its target\n"
    )
