// tilecraft-opt --tuning-log: the schedules convert-graph-to-te writes take the
// log's best config of their workload, so the printed sched IR is what runs tuned.
// RUN: tilecraft-opt %s -p convert-graph-to-te | filecheck %s --check-prefix=DEFAULT
// RUN: printf '%%s\n' '{"kind": "measure", "workload": "dense[[4,16],[8,16],\"NK\",\"float32\"]", "target": "llvm", "config": {"tile": [2, 8], "parallel": 1}, "costs": [1e-6], "error": null, "time": 0}' '{"kind": "measure", "workload": "dense[[4,16],[8,16],\"NK\",\"float32\"]", "target": "llvm", "config": {"tile": [4, 4], "parallel": 0}, "costs": [2e-6], "error": null, "time": 0}' > %t.jsonl
// RUN: tilecraft-opt %s -p convert-graph-to-te --tuning-log %t.jsonl | filecheck %s --check-prefix=TUNED
// A log whose best config does not fit the schedule's knobs is an error naming them.
// RUN: printf '%%s\n' '{"kind": "measure", "workload": "dense[[4,16],[8,16],\"NK\",\"float32\"]", "target": "llvm", "config": {"tile": [9, 9], "parallel": 0}, "costs": [1e-6], "error": null, "time": 0}' > %t.bad.jsonl
// RUN: not tilecraft-opt %s -p convert-graph-to-te --tuning-log %t.bad.jsonl 2>&1 | filecheck %s --check-prefix=BAD
// A damaged log names its line; a missing one is a usage error.
// RUN: printf '%%s\n' '{"kind": "measure"' > %t.torn.jsonl
// RUN: printf 'x\n' >> %t.torn.jsonl
// RUN: not tilecraft-opt %s -p convert-graph-to-te --tuning-log %t.torn.jsonl 2>&1 | filecheck %s --check-prefix=DAMAGED
// RUN: not tilecraft-opt %s -p convert-graph-to-te --tuning-log %t.missing.jsonl 2>&1 | filecheck %s --check-prefix=MISSING

func.func @main(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// The default: 4 x 6 tiles, serial (512 multiply-adds do not pay for threads).
// DEFAULT:     sched.split %{{.*}} by 6
// DEFAULT-NOT: sched.parallel
// DEFAULT:     func.return
// TUNED:       sched.split %{{.*}} by 8
// TUNED:       sched.parallel
// TUNED:       sched.split %{{.*}} by 2
// BAD:         knob 'tile' = [9, 9] is not one of
// DAMAGED:     {{.*}}.jsonl:1: not a JSON record
// MISSING:     tilecraft-opt: error: cannot read the tuning log '{{.*}}missing.jsonl': no such file
