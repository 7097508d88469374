"""Tuning records: an append-only JSON-lines log that survives being killed.

Each line is one JSON object:

- a measurement: `{"kind": "measure", "workload": key, "target": "llvm", "config":
  {knob: value}, "costs": [seconds, ...], "error": null | "message", "time": unix,
  "cold": true | false}` (`cold`: measured with the weights out of cache, as a model
  runs them (templates.measure); a record without it, from before the option, was
  measured hot);
- a task's end: `{"kind": "done", "workload": key, "target": ..., "time": ...}`.

A record is appended as one `write` of its whole line followed by `flush` and
`fsync`, so after any interruption — Ctrl-C, a crash, `kill -9` in the middle of a
write — the file holds every record that was complete, and at most a torn last line
without its newline. Reading ignores that torn tail; the next append cuts it off
first, so the log stays one record per line. A damaged line anywhere else is an
error naming the file and line (never skipped in silence: it could hide a lost
measurement).

Resuming is asking the log: `measured(workload, target)` gives the configs already
measured (by their canonical JSON: knob order does not matter), `finished(...)`
whether the task ended, `best(...)` the fastest error-free record. A tuner that
skips what `measured` holds neither loses nor repeats a measurement across restarts.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException


class TuningLogError(DiagnosticException):
    """A tuning log that is not one: `file:line: message`."""


def config_key(config: dict) -> str:
    """The canonical text of a config (knobs sorted): what identifies a measurement."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Record:
    workload: str
    target: str
    config: dict = field(default_factory=dict)
    costs: tuple[float, ...] = ()
    error: str | None = None
    time: float = 0.0
    kind: str = "measure"
    cold: bool = False  # measured with cold weights (templates.measure); old records: hot

    @property
    def cost(self) -> float:
        """The median of the repeats (inf for an error or no repeats)."""
        if self.error is not None or not self.costs:
            return math.inf
        ordered = sorted(self.costs)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    def to_json(self) -> str:
        data: dict = {"kind": self.kind, "workload": self.workload, "target": self.target, "time": self.time}
        if self.kind == "measure":
            data |= {"config": self.config, "costs": list(self.costs), "error": self.error, "cold": self.cold}
        return json.dumps(data, sort_keys=True)


def _record(data: object, where: str) -> Record:
    if not isinstance(data, dict):
        raise TuningLogError(f"{where}: a record is a JSON object, not {type(data).__name__}")
    kind = data.get("kind")
    if kind not in ("measure", "done"):
        raise TuningLogError(f"{where}: unknown record kind {kind!r} (measure or done)")
    for name in ("workload", "target"):
        if not isinstance(data.get(name), str):
            raise TuningLogError(f"{where}: the record has no {name} string")
    stamp = data.get("time", 0.0)
    if not isinstance(stamp, (int, float)):
        raise TuningLogError(f"{where}: time must be a number")
    if kind == "done":
        return Record(data["workload"], data["target"], time=float(stamp), kind="done")
    config, costs, error = data.get("config"), data.get("costs"), data.get("error")
    if not isinstance(config, dict):
        raise TuningLogError(f"{where}: config must be an object of knob values")
    if not isinstance(costs, list) or not all(isinstance(c, (int, float)) and c >= 0 for c in costs):
        raise TuningLogError(f"{where}: costs must be a list of non-negative seconds")
    if error is not None and not isinstance(error, str):
        raise TuningLogError(f"{where}: error must be null or a message")
    cold = data.get("cold", False)
    if not isinstance(cold, bool):
        raise TuningLogError(f"{where}: cold must be true or false")
    return Record(data["workload"], data["target"], config, tuple(float(c) for c in costs), error, float(stamp),
                  cold=cold)  # fmt: skip


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)


class TuningLog:
    """The records of one log file (created on the first append)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def records(self) -> list[Record]:
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]  # tail: after the last newline (a torn write)
        out = []
        for number, raw in enumerate(complete, start=1):
            if not raw.strip():
                continue
            where = f"{self.path}:{number}"
            try:
                parsed = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise TuningLogError(f"{where}: not a JSON record ({e})") from None
            out.append(_record(parsed, where))
        del tail  # an incomplete last line was being written when the tuner stopped
        return out

    def append(self, record: Record) -> None:
        line = (record.to_json() + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            end = f.tell()
            if end and _last_byte(self.path) != b"\n":  # a torn last line: cut it off
                f.truncate(self.path.read_bytes().rfind(b"\n") + 1)
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def measure(self, workload: str, target: str, config: dict, costs=(), error: str | None = None, *,
                cold: bool = False) -> Record:  # fmt: skip
        record = Record(workload, target, dict(config), tuple(costs), error, time.time(), cold=cold)
        self.append(record)
        return record

    def finish(self, workload: str, target: str) -> None:
        self.append(Record(workload, target, time=time.time(), kind="done"))

    def measured(self, workload: str, target: str) -> dict[str, Record]:
        """Per config (canonical key), its fastest record: a config measured again
        (the tuner confirms its best few) keeps the better of its measurements, since
        noise (another process taking a core) only ever makes a run slower."""
        out: dict[str, Record] = {}
        for r in self.records():
            if r.kind == "measure" and r.workload == workload and r.target == target:
                key = config_key(r.config)
                if key not in out or r.cost < out[key].cost:
                    out[key] = r
        return out

    def measurements(self, workload: str, target: str) -> dict[str, int]:
        """How many records each config of the workload has."""
        counts: dict[str, int] = {}
        for r in self.records():
            if r.kind == "measure" and r.workload == workload and r.target == target:
                counts[config_key(r.config)] = counts.get(config_key(r.config), 0) + 1
        return counts

    def finished(self, workload: str, target: str) -> bool:
        return any(r.kind == "done" and r.workload == workload and r.target == target for r in self.records())

    def best(self, workload: str, target: str) -> Record | None:
        candidates = [r for r in self.measured(workload, target).values() if r.error is None and r.costs]
        return min(candidates, key=lambda r: r.cost, default=None)
