// RUN: tilecraft-opt %s --split-input-file -p 'fuse-ops{enabled=false},concat-in-place' | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'fuse-ops{enabled=false},concat-in-place,plan-memory' | filecheck %s --check-prefix=PLAN

// A concat of two kernels' results is no kernel: its group becomes a top-level
// graph.concat {tc.in_place}, and plan-memory puts each operand at its byte
// offset in the concat's buffer (%b 256 bytes after %a), which lives from the
// first operand's kernel to the concat's last reader.
func.func @two_kernels(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = graph.neg %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = graph.tanh %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %d : tensor<1x32x2x2xf32>
}

// CHECK-LABEL: func.func @two_kernels
// CHECK:         %a = graph.fused "fused_exp"
// CHECK:         %b = graph.fused "fused_neg"
// CHECK-NOT:     graph.fused "fused_concat"
// CHECK:         %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
// CHECK-NEXT:    %d = graph.fused "fused_tanh" (%c)

// PLAN-LABEL: func.func @two_kernels
// PLAN-SAME:    attributes {tc.arena_bytes = 512 : i64, tc.naive_bytes = 512 : i64}
// PLAN:         graph.fused "fused_exp"
// PLAN:         } {tc.offsets = array<i64: 0>}
// PLAN:         graph.fused "fused_neg"
// PLAN:         } {tc.offsets = array<i64: 256>}
// PLAN:         graph.concat %a, %b {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 0>}

// -----

// A chain (a DenseNet block's growing feature map): the inner concat is a part of
// the outer one, so %a, %b and %f all live in %g's buffer (bytes 256-1023); the
// temporary %t does not, and %e takes its bytes once it is dead.
func.func @chain(%x: tensor<1x16x2x2xf32>) -> tensor<1x48x2x2xf32> {
  %t = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %a = graph.neg %t : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = graph.tanh %a : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %e = graph.reduce_mean %c {axes = array<i64: 1>} : (tensor<1x32x2x2xf32>) -> tensor<1x1x2x2xf32>
  %f = graph.broadcast_to %e {shape = array<i64: 1, 16, 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x16x2x2xf32>
  %g = graph.concat %c, %f {axis = 1 : i64} : (tensor<1x32x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x48x2x2xf32>
  %h = graph.relu %g : (tensor<1x48x2x2xf32>) -> tensor<1x48x2x2xf32>
  func.return %h : tensor<1x48x2x2xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK:         %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place}
// CHECK:         %g = graph.concat %c, %f {axis = 1 : i64, tc.in_place}

// PLAN-LABEL: func.func @chain
// PLAN-SAME:    attributes {tc.arena_bytes = 1024 : i64, tc.naive_bytes = 1088 : i64}
// PLAN:         graph.fused "fused_exp"
// PLAN:         } {tc.offsets = array<i64: 0>}
// PLAN:         graph.fused "fused_neg"
// PLAN:         } {tc.offsets = array<i64: 256>}
// PLAN:         graph.fused "fused_tanh"
// PLAN:         } {tc.offsets = array<i64: 512>}
// PLAN:         %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 256>}
// PLAN:         graph.fused "fused_reduce_mean"
// PLAN:         } {tc.offsets = array<i64: 0>}
// PLAN:         graph.fused "fused_broadcast_to"
// PLAN:         } {tc.offsets = array<i64: 768>}
// PLAN:         %g = graph.concat %c, %f {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 256>}

// -----

// Left to a kernel that copies: a returned concat (it lives in the caller's
// buffer), an operand that is an argument or computed from weights alone (it
// is no kernel's result at run time), one operand twice, operands that are not
// contiguous runs (two images, a concat along the last axis) or not at
// multiples of 64 bytes, and a value a concat already holds.
func.func @returned(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = graph.neg %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %c : tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @returned
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @argument(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %x, %a {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = graph.relu %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %d : tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @argument
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @weights_alone(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %w = graph.weight "w" : tensor<1x16x2x2xf32>
  %a = graph.exp %w : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = graph.neg %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = graph.relu %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %d : tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @weights_alone
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @twice(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %a {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = graph.relu %c : (tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %d : tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @twice
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @two_images(%x: tensor<2x16x2x2xf32>) -> tensor<2x32x2x2xf32> {
  %a = graph.exp %x : (tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %b = graph.neg %x : (tensor<2x16x2x2xf32>) -> tensor<2x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x16x2x2xf32>, tensor<2x16x2x2xf32>) -> tensor<2x32x2x2xf32>
  %d = graph.relu %c : (tensor<2x32x2x2xf32>) -> tensor<2x32x2x2xf32>
  func.return %d : tensor<2x32x2x2xf32>
}
// CHECK-LABEL: func.func @two_images
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @last_axis(%x: tensor<1x16x2x16xf32>) -> tensor<1x16x2x32xf32> {
  %a = graph.exp %x : (tensor<1x16x2x16xf32>) -> tensor<1x16x2x16xf32>
  %b = graph.neg %x : (tensor<1x16x2x16xf32>) -> tensor<1x16x2x16xf32>
  %c = graph.concat %a, %b {axis = -1 : i64} : (tensor<1x16x2x16xf32>, tensor<1x16x2x16xf32>) -> tensor<1x16x2x32xf32>
  %d = graph.relu %c : (tensor<1x16x2x32xf32>) -> tensor<1x16x2x32xf32>
  func.return %d : tensor<1x16x2x32xf32>
}
// CHECK-LABEL: func.func @last_axis
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

func.func @unaligned(%x: tensor<1x3xf32>) -> tensor<1x6xf32> {
  %a = graph.exp %x : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %b = graph.neg %x : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x6xf32>
  %d = graph.relu %c : (tensor<1x6xf32>) -> tensor<1x6xf32>
  func.return %d : tensor<1x6xf32>
}
// CHECK-LABEL: func.func @unaligned
// CHECK:         graph.fused "fused_concat"
// CHECK-NOT:     tc.in_place

// -----

// %a has one place: the first concat's buffer. The second concat copies.
func.func @held_once(%x: tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32> {
  %a = graph.exp %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %b = graph.neg %x : (tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %d = graph.concat %b, %a {axis = 1 : i64} : (tensor<1x16x2x2xf32>, tensor<1x16x2x2xf32>) -> tensor<1x32x2x2xf32>
  %e = graph.add %c, %d : (tensor<1x32x2x2xf32>, tensor<1x32x2x2xf32>) -> tensor<1x32x2x2xf32>
  func.return %e : tensor<1x32x2x2xf32>
}
// CHECK-LABEL: func.func @held_once
// CHECK:         %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place}
// CHECK:         %d = graph.fused "fused_concat_1" (%b, %a)
