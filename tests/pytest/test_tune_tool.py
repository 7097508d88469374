"""`tilecraft-tune` (tools/tune.py) and its curves (autotune/plot.py): a tiny ONNX
model's task tuned into a log, a second run resuming from it, the log applied by
tc.compile, the same command on a dask LocalCluster, the guided/random/default PNG,
and bad inputs as one-line errors with exit status 1 (more in
tests/filecheck/tools/tune-errors.mlir)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.autotune.plot import Panel, best_so_far, curve, plot_curves
from tilecraft.autotune.records import Record, TuningLog, config_key
from tilecraft.autotune.templates import get_template, workload_key
from tilecraft.tools.tune import TaskResult, TaskRun, describe, main, random_log_path, summary

SHAPE = (32, 32, 32)
KEY = workload_key("matmul", SHAPE)
# The one task of `model`: alter-layout gives the dense weight the KN layout.
DENSE = ([8, 64], [64, 32], "KN", "float32")
DENSE_KEY = workload_key("dense", DENSE)


def _save(tmp_path, name: str, nodes, x_shape, y_shape, inits=()):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], list(inits),
    )  # fmt: skip
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


@pytest.fixture
def model(tmp_path):
    """A tiny ONNX model whose one tunable task is a dense 8x64 @ [32x64]^T."""
    w = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["y"])]
    return _save(tmp_path, "dense", nodes, [8, 64], [8, 32], [numpy_helper.from_array(w, "w")])


def expected_tuned(log, key, default) -> dict:
    """What tc.compile applies: the best record unless the default is within 3% of it."""
    best, records = log.best(key, "llvm"), log.measured(key, "llvm")
    held = records.get(config_key(default))
    return {} if held is not None and best.cost * 1.03 >= held.cost else {key: best.config}


def measures(path) -> list[Record]:
    return [r for r in TuningLog(path).records() if r.kind == "measure"]


def test_tune_writes_the_log_and_a_second_run_resumes(model, tmp_path, capsys):
    # random search: a guided batch scores ~1000 candidates' loop features (~20 s here)
    log = tmp_path / "tune.jsonl"
    assert main([str(model), "--trials", "4", "--log", str(log), "--random"]) == 0
    out = capsys.readouterr()
    records = measures(log)
    assert len(records) == 4 and {r.workload for r in records} == {DENSE_KEY}
    assert TuningLog(log).finished(DENSE_KEY, "llvm")
    assert f"[1/1] {DENSE_KEY}: 4 trials (0 errors) in " in out.out
    assert "GFLOP/s vs default" in out.out and "tuned 1 task(s): 4 new measurements" in out.out
    assert "best" in out.err and "GFLOP/s" in out.err  # the progress bar
    # the default is the tuner's measurement of the default config, in the log
    dense = get_template("dense")
    default = TuningLog(log).measured(DENSE_KEY, "llvm")[config_key(dense.default_config(*DENSE))]
    assert f"vs default {dense.flops(*DENSE) / default.cost / 1e9:.2f} " in out.out
    # more trials: the four are not measured again
    assert main([str(model), "--trials", "6", "--log", str(log), "--random"]) == 0
    out = capsys.readouterr().out
    records = measures(log)
    assert len(records) == 6 and len({json.dumps(r.config, sort_keys=True) for r in records}) == 6
    assert "6 trials (0 errors, 4 from the log)" in out and "2 new measurements" in out
    # nothing left to do: no measurement at all
    assert main([str(model), "--trials", "6", "--log", str(log), "--random"]) == 0
    out = capsys.readouterr().out
    assert len(measures(log)) == 6 and "0 new measurements" in out
    # the log is what tc.compile applies: the best record of the workload unless it is
    # within noise of the default, and the tool says which
    compiled = tc.compile(str(model), tuning_log=str(log))
    assert compiled.tuned == expected_tuned(TuningLog(log), DENSE_KEY, get_template("dense").default_config(*DENSE))
    assert ("the default stays" in out) == (compiled.tuned == {})


def test_the_summary_counts_what_tc_compile_applies():
    task = type("T", (), {"key": "k", "count": 2, "flops": 1e6})()
    run = TaskRun(trials=4, errors=0, new=4, seconds=1.0)
    kept = TaskResult(task, run, best_seconds=0.99e-3, default_seconds=1e-3, applied=False)
    tuned = TaskResult(task, run, best_seconds=0.5e-3, default_seconds=1e-3)
    assert "the default stays" in describe(1, 2, kept) and "the default stays" not in describe(2, 2, tuned)
    assert "tuned kernels 4.000 ms -> 3.000 ms per run (1.33x)" in summary([kept, tuned])


def test_small_tasks_show_their_rate_in_significant_digits():
    """A reduction of a few thousand operations runs at a fraction of a GFLOP/s:
    the line must still tell the best from the default."""
    task = type("T", (), {"key": "reduce", "count": 1, "flops": 4096})()
    run = TaskRun(trials=4, errors=0, new=4, seconds=1.0)
    line = describe(1, 1, TaskResult(task, run, best_seconds=2e-3, default_seconds=4e-3))
    assert "best 0.00205 GFLOP/s vs default 0.00102 (2.00x)" in line


def test_tune_on_a_dask_scheduler(model, tmp_path, capsys):
    from distributed import LocalCluster

    log = tmp_path / "tune.jsonl"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        argv = [str(model), "--trials", "3", "--log", str(log), "--random", "--scheduler", cluster.scheduler_address]
        assert main(argv) == 0
    assert len(measures(log)) == 3 and "3 new measurements" in capsys.readouterr().out


def test_plot_writes_the_png_and_tunes_random_search_beside_the_log(model, tmp_path, capsys):
    log, png = tmp_path / "tune.jsonl", tmp_path / "curves.png"
    assert main([str(model), "--trials", "4", "--log", str(log), "--plot", str(png)]) == 0
    assert f"curves: {png}" in capsys.readouterr().out
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000
    random = tmp_path / "tune.random.jsonl"
    # guided search confirms its best 3 and the default (up to 4 more records); random does not
    assert len(TuningLog(log).measured(DENSE_KEY, "llvm")) == 4 and 4 < len(measures(log)) <= 8
    assert len(measures(random)) == 4


def test_nothing_to_tune_is_an_error(tmp_path, capsys):
    model = _save(tmp_path, "relu", [helper.make_node("Relu", ["x"], ["y"])], [8, 64], [8, 64])
    assert main([str(model), "--trials", "4", "--log", str(tmp_path / "t.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tilecraft-tune: error: nothing to tune in '{model}'") and err.count("\n") == 1


def test_a_damaged_log_is_an_error_naming_its_line(model, tmp_path, capsys):
    log = tmp_path / "tune.jsonl"
    TuningLog(log).measure(DENSE_KEY, "llvm", {"tile": 1}, [1.0])
    with open(log, "a") as f:
        f.write('{"kind": "measure"}\n')
    assert main([str(model), "--trials", "4", "--log", str(log)]) == 1
    assert capsys.readouterr().err == f"tilecraft-tune: error: {log}:2: the record has no workload string\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{dir}/missing.onnx"], "cannot read '{dir}/missing.onnx': no such file"),
        (["{dir}/model.txt"], "'{dir}/model.txt' is neither an ONNX model (.onnx) nor an IR file (.mlir)"),
        (["{dir}/garbage.onnx"], "cannot read '{dir}/garbage.onnx' as an ONNX model: Error parsing message"),
        (["{dir}/dense.onnx", "--scheduler", "tcp://127.0.0.1:1"],
         "no dask scheduler answers at 'tcp://127.0.0.1:1': Connection refused"),
        (["{dir}/dense.onnx", "--scheduler", "nowhere"], "bad --scheduler address 'nowhere': missing port number"),
        (["{dir}/dense.onnx", "--input-shape", "x=1x3"],
         "the shape (1, 3) given for input 'x' does not fit its declared shape (8, 64)"),
    ],
)  # fmt: skip
def test_bad_inputs_exit_1_with_one_line(model, tmp_path, capsys, argv, message):
    (tmp_path / "model.txt").write_text("hello")
    (tmp_path / "garbage.onnx").write_bytes(b"\x0f\xffnot a protobuf")
    argv = [a.format(dir=tmp_path) for a in argv] + ["--trials", "4", "--log", str(tmp_path / "t.jsonl")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("tilecraft-tune: error: " + message.format(dir=tmp_path)) and err.count("\n") == 1
    assert not (tmp_path / "t.jsonl").exists()


def test_the_random_log_name():
    assert random_log_path("runs/tune.jsonl").as_posix() == "runs/tune.random.jsonl"
    assert random_log_path("tune").as_posix() == "tune.random.jsonl"


def test_best_so_far_runs_in_log_order_and_errors_find_nothing(tmp_path):
    records = [Record("w", "llvm", {"a": 1}, (2.0,)), Record("w", "llvm", {"a": 2}, (), "timeout"),
               Record("w", "llvm", {"a": 3}, (4.0,)), Record("w", "llvm", {"a": 4}, (1.0, 1.0, 9.0)),
               Record("w", "llvm", kind="done")]  # fmt: skip
    assert best_so_far(records, flops=4e9) == [2.0, 2.0, 2.0, 4.0]
    log = TuningLog(tmp_path / "t.jsonl")
    for seconds in (0.5, 0.25, 1.0):
        log.measure(KEY, "llvm", {"tile_i": seconds}, [seconds])
    log.measure(KEY, "llvm", {"tile_i": 0.5}, [0.01])  # a repeat of the first config: not a new trial
    log.measure(workload_key("matmul", (8, 8, 8)), "llvm", {"tile_i": 1}, [1e-9])  # another workload
    flops = get_template("matmul").flops(*SHAPE)
    assert curve(log, "matmul", SHAPE) == pytest.approx([flops / 0.5e9, flops / 0.25e9, flops / 0.25e9])


def test_plot_curves_draws_one_panel_per_task(tmp_path):
    panels = [Panel("a", {"model-guided": [1.0, 2.0, 3.0], "random": [1.0, 1.5, 1.5]}, default=1.2),
              Panel("b", {"model-guided": [2.0], "random": []}, default=None)]  # fmt: skip
    path = plot_curves(panels, tmp_path / "sub" / "c.png", title="curves")
    assert path.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        plot_curves([], tmp_path / "none.png")


def test_curve_colors_keep_each_search_in_its_family():
    from tilecraft.autotune.plot import _curve_colors

    colors = _curve_colors(["model-guided", "model-guided (seed 1)", "model-guided (seed 2)", "random"])
    guided = [colors["model-guided"], colors["model-guided (seed 1)"], colors["model-guided (seed 2)"]]
    assert len(set(guided)) == 3 and colors["random"] not in guided
    assert colors["random"] == _curve_colors(["random"])["random"] == "tab:orange"


def test_tilecraft_run_applies_a_tuning_log(model, tmp_path, capsys):
    """tilecraft-run --tuning-log compiles as tc.compile(tuning_log=) does: the log's
    best config of the dense workload (faster than the default by more than noise)."""
    from tilecraft.tools import run

    dense = get_template("dense")
    default = dense.default_config(*DENSE)
    config = dense.space(*DENSE).neighbour(default, np.random.default_rng(0))
    assert config != default
    log = TuningLog(tmp_path / "t.jsonl")
    log.measure(DENSE_KEY, "llvm", default, [1e-3])
    log.measure(DENSE_KEY, "llvm", config, [1e-4])
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    argv = [str(model), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out), "--bench", "--runs", "1"]
    assert run.main([*argv, "--tuning-log", str(log.path)]) == 0
    assert "1 workload(s) tuned by the log" in capsys.readouterr().out
    assert tc.compile(str(model), tuning_log=str(log.path)).tuned == {DENSE_KEY: config}
    np.testing.assert_allclose(np.load(out), tc.compile(str(model))(x), rtol=1e-5, atol=1e-5)
    # A log that is not there is an error, not an untuned run.
    missing = tmp_path / "none.jsonl"
    assert run.main([*argv, "--tuning-log", str(missing)]) == 1
    assert capsys.readouterr().err == f"tilecraft-run: error: cannot read the tuning log '{missing}': no such file\n"
