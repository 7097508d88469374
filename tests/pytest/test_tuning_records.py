"""Tuning records (autotune/records.py): an append-only JSON-lines log that a tuner
killed at any moment (kill -9 included) resumes from without losing or repeating a
measurement."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tilecraft.autotune.records import Record, TuningLog, TuningLogError, config_key


def test_records_round_trip_and_answer_resume_questions(tmp_path):
    log = TuningLog(tmp_path / "tune.jsonl")
    assert log.records() == [] and log.best("mm", "llvm") is None
    log.measure("mm", "llvm", {"tile": 32, "order": "ij"}, [0.3, 0.1, 0.2])
    log.measure("mm", "llvm", {"order": "ji", "tile": 16}, [0.05, 0.07, 0.06])
    log.measure("mm", "llvm", {"tile": 64, "order": "ij"}, [], error="timeout after 10 s")
    log.measure("conv", "llvm", {"tile": 8}, [0.01])
    assert not log.finished("mm", "llvm")
    log.finish("mm", "llvm")
    assert log.finished("mm", "llvm") and not log.finished("conv", "llvm")
    measured = log.measured("mm", "llvm")
    assert set(measured) == {config_key({"order": "ij", "tile": 32}), config_key({"tile": 16, "order": "ji"}),
                             config_key({"order": "ij", "tile": 64})}  # fmt: skip
    best = log.best("mm", "llvm")
    assert best.config == {"order": "ji", "tile": 16} and best.cost == pytest.approx(0.06)
    assert measured[config_key({"tile": 64, "order": "ij"})].cost == float("inf")
    lines = (tmp_path / "tune.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(line)["kind"] in ("measure", "done") for line in lines)


def test_a_torn_last_line_is_ignored_and_cut_off_by_the_next_append(tmp_path):
    path = tmp_path / "tune.jsonl"
    log = TuningLog(path)
    log.measure("mm", "llvm", {"tile": 8}, [1.0])
    with open(path, "ab") as f:
        f.write(b'{"kind": "measure", "workload": "mm", "tar')  # killed mid-write
    assert [r.config for r in log.records()] == [{"tile": 8}]
    log.measure("mm", "llvm", {"tile": 16}, [2.0])
    assert [r.config for r in log.records()] == [{"tile": 8}, {"tile": 16}]
    assert path.read_bytes().count(b"\n") == 2 and b"tar\n" not in path.read_bytes()


@pytest.mark.parametrize(
    "line, message",
    [
        (b"not json", "not a JSON record"),
        (b"[1, 2]", "a record is a JSON object"),
        (b'{"kind": "measure", "workload": "mm", "target": "llvm", "config": 3, "costs": []}', "config must be"),
        (b'{"kind": "what", "workload": "mm", "target": "llvm"}', "unknown record kind"),
    ],
)
def test_a_damaged_line_is_an_error_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "tune.jsonl"
    TuningLog(path).measure("mm", "llvm", {"tile": 8}, [1.0])
    with open(path, "ab") as f:
        f.write(line + b"\n")
    with pytest.raises(TuningLogError, match=rf"tune.jsonl:2: {message}"):
        TuningLog(path).records()


TUNER = textwrap.dedent(
    """
    import sys, time
    from tilecraft.autotune.records import TuningLog, config_key
    log = TuningLog(sys.argv[1])
    done = log.measured("mm", "llvm")
    for tile in range(400):
        config = {"tile": tile, "padding": "x" * 2000}  # long lines: kills land mid-write
        if config_key(config) in done:
            continue
        time.sleep(0.001)  # the measurement
        log.measure("mm", "llvm", config, [tile / 1000.0])
    log.finish("mm", "llvm")
    """
)


def test_a_tuner_killed_with_sigkill_resumes_without_losing_or_repeating(tmp_path):
    script = tmp_path / "tuner.py"
    script.write_text(TUNER)
    path = tmp_path / "tune.jsonl"
    kills = 0
    for delay in (0.4, 0.3, 0.5):
        process = subprocess.Popen([sys.executable, str(script), str(path)])
        time.sleep(delay)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            kills += 1
        process.wait()
    subprocess.run([sys.executable, str(script), str(path)], check=True)
    log = TuningLog(path)
    records = [r for r in log.records() if r.kind == "measure"]
    tiles = [r.config["tile"] for r in records]
    assert sorted(tiles) == list(range(400))  # every measurement once: none lost, none repeated
    assert log.finished("mm", "llvm")
    assert log.best("mm", "llvm").config["tile"] == 0
    assert kills >= 1  # the test did interrupt a run


def test_record_costs_median():
    assert Record("w", "llvm", {}, (3.0, 1.0, 2.0)).cost == 2.0
    assert Record("w", "llvm", {}, (4.0, 1.0)).cost == 2.5


def test_a_config_measured_twice_keeps_its_faster_record(tmp_path):
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure("w", "llvm", {"a": 1}, [3.0, 3.0, 3.0])
    log.measure("w", "llvm", {"a": 2}, [2.0])
    log.measure("w", "llvm", {"a": 1}, [1.0, 1.0, 1.0])  # confirmed: the first run was slowed
    log.measure("w", "llvm", {"a": 2}, [], "timeout after 1 s")  # an error never hides a time
    assert {k: r.cost for k, r in log.measured("w", "llvm").items()} == {'{"a":1}': 1.0, '{"a":2}': 2.0}
    assert log.measurements("w", "llvm") == {'{"a":1}': 2, '{"a":2}': 2}
    assert log.best("w", "llvm").config == {"a": 1}
