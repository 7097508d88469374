// Every op its own group (fuse-ops{enabled=false}): what each op writes is planned.
// RUN: tilecraft-opt %s --split-input-file -p 'fuse-ops{enabled=false},plan-memory' | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p fuse-ops,plan-memory | filecheck %s --check-prefix=FUSED

// A chain: each value dies at its next reader, so two 1 KiB buffers take turns
// (the third value reuses the first's bytes; the result lives in the caller's
// buffer, -1). The naive sum counts the three planned values.
func.func @chain(%x: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %a = graph.exp %x : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %b = graph.neg %a : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %c = graph.tanh %b : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %d = graph.relu %c : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %d : tensor<1x256xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    attributes {tc.arena_bytes = 2048 : i64, tc.naive_bytes = 3072 : i64}
// CHECK:         graph.fused "fused_exp"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         graph.fused "fused_neg"
// CHECK:         } {tc.offsets = array<i64: 1024>}
// CHECK:         graph.fused "fused_tanh"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         graph.fused "fused_relu"
// CHECK:         } {tc.offsets = array<i64: -1>}

// After fuse-ops the groups are what is planned (one group here: all output).
// FUSED-LABEL: func.func @chain
// FUSED-SAME:    attributes {tc.arena_bytes = 0 : i64, tc.naive_bytes = 0 : i64}
// FUSED:         } {tc.offsets = array<i64: -1>}

// -----

// %a stays live across %b and %c (the add reads it last), so %b and %c cannot
// take its bytes; %c takes %b's once %b is dead. Small tensors round up to 64.
func.func @long_lived(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = graph.tanh %b : (tensor<4xf32>) -> tensor<4xf32>
  %d = graph.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// CHECK-LABEL: func.func @long_lived
// CHECK-SAME:    attributes {tc.arena_bytes = 192 : i64, tc.naive_bytes = 192 : i64}
// CHECK:         graph.fused "fused_exp"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         graph.fused "fused_neg"
// CHECK:         } {tc.offsets = array<i64: 64>}
// A kernel never writes into a buffer it reads: %c cannot take %b's bytes.
// CHECK:         graph.fused "fused_tanh"
// CHECK:         } {tc.offsets = array<i64: 128>}

// -----

// Best fit: once the 4 KiB %a and the 1 KiB %b die (in the concat), the 1 KiB
// %d takes the smallest free block that fits (%b's), not the start of %a's,
// which the 2 KiB %e then takes; %k, between them, lives to the end. Weights
// and constants are not planned.
func.func @best_fit(%x: tensor<1024xf32>, %y: tensor<256xf32>, %z: tensor<256xf32>, %v: tensor<512xf32>) -> (tensor<1280xf32>, tensor<256xf32>, tensor<512xf32>) {
  %w = graph.weight "w" : tensor<256xf32>
  %a = graph.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %k = graph.reduce_sum %a {keepdims = false} : (tensor<1024xf32>) -> tensor<f32>
  %b = graph.neg %y : (tensor<256xf32>) -> tensor<256xf32>
  %c = graph.concat %a, %b {axis = 0 : i64} : (tensor<1024xf32>, tensor<256xf32>) -> tensor<1280xf32>
  %d = graph.mul %z, %w : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %e = graph.exp %v : (tensor<512xf32>) -> tensor<512xf32>
  %g = graph.add %d, %k : (tensor<256xf32>, tensor<f32>) -> tensor<256xf32>
  %h = graph.add %e, %k : (tensor<512xf32>, tensor<f32>) -> tensor<512xf32>
  func.return %c, %g, %h : tensor<1280xf32>, tensor<256xf32>, tensor<512xf32>
}

// CHECK-LABEL: func.func @best_fit
// CHECK-SAME:    tc.arena_bytes = 5184 : i64, tc.naive_bytes = 8256 : i64
// CHECK-NEXT:    graph.weight "w" : tensor<256xf32>
// CHECK:         graph.fused "fused_exp"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         graph.fused "fused_reduce_sum"
// CHECK:         } {tc.offsets = array<i64: 4096>}
// CHECK:         graph.fused "fused_neg"
// CHECK:         } {tc.offsets = array<i64: 4160>}
// CHECK:         graph.fused "fused_concat"
// CHECK:         } {tc.offsets = array<i64: -1>}
// CHECK:         graph.fused "fused_mul"
// CHECK:         } {tc.offsets = array<i64: 4160>}
// CHECK:         graph.fused "fused_exp_1"
// CHECK:         } {tc.offsets = array<i64: 0>}

// -----

// Multi-result ops get one offset per result.
func.func @split(%x: tensor<32xf32>) -> tensor<32xf32> {
  %n = graph.neg %x : (tensor<32xf32>) -> tensor<32xf32>
  %p, %q = graph.split %n {axis = 0 : i64, sizes = array<i64: 16, 16>} : (tensor<32xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  %c = graph.concat %q, %p {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
  func.return %c : tensor<32xf32>
}

// CHECK-LABEL: func.func @split
// CHECK-SAME:    tc.arena_bytes = 256 : i64, tc.naive_bytes = 256 : i64
// CHECK:         graph.fused "fused_neg"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         graph.fused "fused_split"
// CHECK:         } {tc.offsets = array<i64: 128, 192>}

// -----

// A value whose size is known only when the function runs is not placed in the
// (static) arena: offset -2, a buffer of its own; static values are planned as
// before, and a returned one lives in the caller's buffer (-1).
func.func @symbolic(%x: tensor<?x8xf32, ["batch"]>, %w: tensor<8x8xf32>) -> tensor<?x8xf32, ["batch"]> {
  %a = graph.relu %x : (tensor<?x8xf32, ["batch"]>) -> tensor<?x8xf32, ["batch"]>
  %b = graph.tanh %w : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = graph.dense %a, %b : (tensor<?x8xf32, ["batch"]>, tensor<8x8xf32>) -> tensor<?x8xf32, ["batch"]>
  func.return %c : tensor<?x8xf32, ["batch"]>
}

// CHECK-LABEL: func.func @symbolic(
// CHECK-SAME:    attributes {tc.arena_bytes = 256 : i64, tc.naive_bytes = 256 : i64}
// CHECK:         %a = graph.fused "fused_relu"
// CHECK:         } {tc.offsets = array<i64: -2>}
// CHECK:         %b = graph.fused "fused_tanh"
// CHECK:         } {tc.offsets = array<i64: 0>}
// CHECK:         %c = graph.fused "fused_dense"
// CHECK:         } {tc.offsets = array<i64: -1>}
// FUSED-LABEL: func.func @symbolic(
// FUSED:         } {tc.offsets = array<i64: -2>}
