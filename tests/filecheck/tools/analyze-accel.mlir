// tilecraft-analyze --accel: for each op with multiply-adds, whether the accelerator
// of a spec takes it (partition-accel's own test) or why not, the share of the MACs
// it takes, and the speedup Amdahl's law allows.

// RUN: echo '{"name": "test", "peak_gflops": 100, "bandwidth_gbs": 10}' > %t.machine.json
// RUN: tilecraft-analyze %s --analysis macs --accel default --machine %t.machine.json --json %t.json | filecheck %s
// CHECK:      accelerability on default (VTA): BATCH 1, BLOCK 16, 256 MACs a cycle at 100 MHz
// CHECK-NEXT: name {{ +}}op {{ +}}macs {{ +}}accel {{ +}}cpu_s {{ +}}chain_cpu_s {{ +}}accel_s {{ +}}reason
// The chain x cast, conv, relu, requantize; w's cast is computed when compiling. Its
// 449 cycles at 100 MHz: the load module's 64-cycle latency and 2,560 bytes (16 input
// and 9 weight tiles) at 8 a cycle, then a last store of at least 65 cycles.
// CHECK-NEXT: acc {{ +}}graph.conv2d {{ +}}36,864 {{ +}}yes {{ +}}1.13e-06 {{ +}}1.59e-06 {{ +}}4.49e-06{{$}}
// CHECK-NEXT: c {{ +}}graph.conv2d {{ +}}6,144 {{ +}}no {{ +}}4.1e-07 {{ +}}input channels 24 not a multiple of BLOCK_IN 16{{$}}
// CHECK-NEXT: fc {{ +}}graph.conv2d {{ +}}36,864 {{ +}}no {{ +}}1.13e-06 {{ +}}conv2d on f32: not quantized to int8 (tc.quantize makes int8 chains){{$}}
// CHECK-NEXT: accelerable: 1 of 3 ops with multiply-adds, 36,864 of 79,872 MACs (46.2%)
// CHECK-NEXT: Amdahl: 3.78e-06 s on the CPU (roofline); the accelerator takes 1.59e-06 s of it in 4.49e-06 s (estimate, a lower bound): speedup 0.566x, at most 1.73x with an infinitely fast accelerator

// RUN: filecheck %s --check-prefix=DATA < %t.json
// DATA:      "accelerability": {
// DATA-NEXT:  "totals": {
// DATA-NEXT:   "spec": "default (VTA)",
// DATA-NEXT:   "compute_ops": 3,
// DATA-NEXT:   "accelerable_ops": 1,
// DATA:       "ops": [
// DATA-NEXT:   {
// DATA-NEXT:    "name": "acc",
// DATA-NEXT:    "op": "graph.conv2d",
// DATA-NEXT:    "accelerable": true,
// DATA-NEXT:    "reason": null,
// DATA:         "accel_cycles": 449,
// DATA:         "name": "c",
// DATA-NEXT:    "op": "graph.conv2d",
// DATA-NEXT:    "accelerable": false,
// DATA-NEXT:    "reason": "input channels 24 not a multiple of BLOCK_IN 16",

// A BLOCK-32 machine takes none of them: 16 channels do not fill its blocks.
// RUN: sed -e 's/"LOG_BLOCK": 4/"LOG_BLOCK": 5/' %S/../../../backends/accel/vta_default.json > %t.block32.json
// RUN: tilecraft-analyze %s --analysis macs --accel %t.block32.json --machine %t.machine.json | filecheck %s --check-prefix=BLOCK32
// BLOCK32:      accelerability on {{.*}}block32.json: BATCH 1, BLOCK 32, 1024 MACs a cycle at 100 MHz
// BLOCK32:      acc {{ +}}graph.conv2d {{ +}}36,864 {{ +}}no {{.*}} input channels 16 not a multiple of BLOCK_IN 32{{$}}
// BLOCK32-NOT:  yes
// BLOCK32:      accelerable: 0 of 3 ops with multiply-adds, 0 of 79,872 MACs (0.0%)

// Without --accel there is no such section, and the JSON has no such key.
// RUN: tilecraft-analyze %s --analysis macs --json %t.plain.json | filecheck %s --check-prefix=PLAIN
// PLAIN-NOT: accelerab
// RUN: filecheck %s --check-prefix=PLAIN < %t.plain.json

// A spec file that is missing, not JSON, or lacks a key: one line naming it, exit 1.
// RUN: not tilecraft-analyze %s --accel %t.missing.json 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: tilecraft-analyze: error: {{.*}}missing.json: cannot read the spec file: No such file or directory
// MISSING-NOT: Traceback
// RUN: echo 'LOG_BLOCK = 4' > %t.notjson.json
// RUN: not tilecraft-analyze %s --accel %t.notjson.json 2>&1 | filecheck %s --check-prefix=GARBLED
// GARBLED: tilecraft-analyze: error: {{.*}}notjson.json:1:1: not valid JSON: Expecting value
// RUN: echo '{"LOG_BLOCK": 4}' > %t.partial.json
// RUN: not tilecraft-analyze %s --accel %t.partial.json 2>&1 | filecheck %s --check-prefix=PARTIAL
// PARTIAL: tilecraft-analyze: error: {{.*}}partial.json:LOG_INP_WIDTH: missing (every key must be given)

func.func @main(%x: tensor<1x16x4x4xi8>, %z: tensor<1x24x4x4xi8>, %f: tensor<1x16x4x4xf32>) -> (tensor<1x16x4x4xi8>, tensor<1x16x4x4xi8>, tensor<1x16xf32>) {
  %w = graph.constant dense<1> : tensor<16x16x3x3xi8>
  %b = graph.constant dense<3> : tensor<16xi32>
  %xi = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x16x3x3xi8>) -> tensor<16x16x3x3xi32>
  %acc = graph.conv2d %xi, %wi, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xi32>, tensor<16x16x3x3xi32>, tensor<16xi32>) -> tensor<1x16x4x4xi32>
  %r = graph.relu %acc : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi32>
  %q = graph.requantize %r {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %v = graph.constant dense<1> : tensor<16x24x1x1xi8>
  %zi = graph.cast %z {to = i32} : (tensor<1x24x4x4xi8>) -> tensor<1x24x4x4xi32>
  %vi = graph.cast %v {to = i32} : (tensor<16x24x1x1xi8>) -> tensor<16x24x1x1xi32>
  %c = graph.conv2d %zi, %vi : (tensor<1x24x4x4xi32>, tensor<16x24x1x1xi32>) -> tensor<1x16x4x4xi32>
  %qc = graph.requantize %c {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %fw = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %fc = graph.conv2d %f, %fw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32>
  %fr = graph.relu %fc : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %fp = graph.global_avg_pool2d %fr : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  %ff = graph.flatten %fp : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  func.return %q, %qc, %ff : tensor<1x16x4x4xi8>, tensor<1x16x4x4xi8>, tensor<1x16xf32>
}
