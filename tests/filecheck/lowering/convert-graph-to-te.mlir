// RUN: tilecraft-opt %s --split-input-file -p convert-graph-to-te | filecheck %s

// A fused group becomes a call of a te function named after it; the call keeps
// the group's attributes (the memory plan's offsets).
// CHECK-LABEL: func.func @dense_relu
// CHECK-NEXT:    %[[Y:.*]] = func.call @fused_dense_relu(%x, %w) {tc.offsets = array<i64: -1>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x8xf32>
// CHECK:       func.func @fused_dense_relu(%{{.*}}: tensor<4x16xf32> {tc.name = "p0"}, %{{.*}}: tensor<8x16xf32> {tc.name = "p1"}) -> tensor<4x8xf32>
// CHECK:         te.reduce sum
// CHECK:         %[[RELU:.*]] = te.compute "relu"
// CHECK:         sched.schedule
// CHECK:         func.return %[[RELU]] : tensor<4x8xf32>
func.func @dense_relu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %y = graph.fused "fused_dense_relu" (%x, %w) : (tensor<4x16xf32>, tensor<8x16xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x16xf32>, %b: tensor<8x16xf32>):
    %d = graph.dense %a, %b : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %r = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
    graph.yield %r : tensor<4x8xf32>
  } {tc.offsets = array<i64: -1>}
  func.return %y : tensor<4x8xf32>
}

// -----

// Two groups of identical structure share one function. The scalar constant is
// folded into it (not passed), and the intermediate stages are computed inline:
// only the output stage has loops, its row split by the vector width.
// CHECK-LABEL: func.func @dedup
// CHECK:         %[[Y:.*]] = func.call @scale_a(%x) {tc.offsets = array<i64: 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK-NEXT:    %[[Z:.*]] = func.call @scale_a(%[[Y]]) {tc.offsets = array<i64: -1>}
// CHECK-NOT:   func.func @scale_b
// CHECK:       func.func @scale_a(%p0: tensor<64x64xf32> {tc.name = "p0"}) -> tensor<64x64xf32>
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:         sched.schedule {
// CHECK:           sched.compute_inline %s_const
// CHECK:           sched.compute_inline %s_mul
// CHECK:           %[[I:.*]] = sched.axis %s_tanh "i1"
// CHECK-NEXT:      %[[O:.*]], %[[IN:.*]] = sched.split %[[I]] by 16
// CHECK-NEXT:      sched.vectorize %[[IN]]
// CHECK-NOT:   func.func @scale_b
func.func @dedup(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = graph.constant dense<2.0> : tensor<f32>
  %y = graph.fused "scale_a" (%x, %c) : (tensor<64x64xf32>, tensor<f32>) -> (tensor<64x64xf32>) {
  ^bb0(%a: tensor<64x64xf32>, %s: tensor<f32>):
    %m = graph.mul %a, %s : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
    %t = graph.tanh %m : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %t : tensor<64x64xf32>
  } {tc.offsets = array<i64: 0>}
  %z = graph.fused "scale_b" (%y, %c) : (tensor<64x64xf32>, tensor<f32>) -> (tensor<64x64xf32>) {
  ^bb0(%a: tensor<64x64xf32>, %s: tensor<f32>):
    %m = graph.mul %a, %s : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
    %t = graph.tanh %m : (tensor<64x64xf32>) -> tensor<64x64xf32>
    graph.yield %t : tensor<64x64xf32>
  } {tc.offsets = array<i64: -1>}
  func.return %z : tensor<64x64xf32>
}

// -----

// An op outside any group gets a group of its own. softmax uses the rows
// schedule: its max, exp, sum and reciprocal stages are computed at the output's
// row loop (one row each), and the rows are vectorized.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    func.call @softmax_0(%x) : (tensor<8x128xf32>) -> tensor<8x128xf32>
// CHECK:       func.func @softmax_0
// CHECK:         te.compute "softmax_max"
// CHECK:         te.compute "softmax_exp"
// CHECK:         te.compute "softmax_sum"
// CHECK:         te.compute "softmax_inv"
// CHECK:         te.compute "softmax"
// CHECK:         sched.schedule {
// CHECK:           sched.vectorize
// CHECK:           %[[ROW:.*]] = sched.axis %s_softmax "i0"
// CHECK-NEXT:      sched.compute_at %s_softmax_max, %[[ROW]]
// CHECK:           sched.compute_at %s_softmax_exp, %[[ROW]]
// CHECK:           sched.compute_at %s_softmax_sum, %[[ROW]]
// CHECK:           sched.compute_at %s_softmax_inv, %[[ROW]]
func.func @softmax(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %s = graph.softmax %x {axis = -1 : i64} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  func.return %s : tensor<8x128xf32>
}

// -----

// A large injective group: axes fused, the tail vectorized, the head parallel.
// CHECK-LABEL: func.func @big_injective
// CHECK:       func.func @relu_0
// CHECK:         %[[F:.*]] = sched.fuse %{{.*}}, %{{.*}}, %{{.*}}
// CHECK:         %[[O:.*]], %[[I:.*]] = sched.split %{{.*}} by 16
// CHECK-NEXT:    sched.vectorize %[[I]]
// CHECK-NEXT:    sched.parallel %[[F]]
func.func @big_injective(%x: tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32> {
  %r = graph.relu %x : (tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  func.return %r : tensor<2x64x32x32xf32>
}

// -----

// te tensors have at least one axis: a scalar crosses the call as a one-element
// tensor, through graph.reshape views on both sides.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT:    %[[A:.*]] = graph.reshape %x {shape = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT:    %[[C:.*]] = func.call @relu_0(%[[A]]) : (tensor<1xf32>) -> tensor<1xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %[[C]] {shape = array<i64>} : (tensor<1xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return %[[R]] : tensor<f32>
// CHECK:       func.func @relu_0(%p0: tensor<1xf32> {tc.name = "p0"}) -> tensor<1xf32>
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %r = graph.relu %x : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// A 3-D convolution is the same kernel with one more window axis: the padded
// input (stride 2 on the last axis: stored in column phases, [.., 2, 4]), a
// reduction over channels and the 3x3x3 window, the last output axis vectorized
// and the others fused into one loop of rows, which stays serial: 48 outputs of
// 54 multiply-adds do not pay for a parallel launch (topi.schedule.parallel_pays).
// CHECK-LABEL: func.func @conv3d_0(
// CHECK:         %[[PAD:.*]] = te.compute "pad" (%{{.*}}: "n", %{{.*}}: "c", %{{.*}}: "d", %{{.*}}: "h", %{{.*}}: "r", %{{.*}}: "q") -> tensor<1x2x4x6x2x4xf32>
// CHECK:         te.compute "conv2d" (%{{.*}}: "n", %{{.*}}: "o", %{{.*}}: "od", %{{.*}}: "oh", %{{.*}}: "ow") -> tensor<1x4x2x2x3xf32>
// CHECK-NEXT:      te.reduce sum (%{{.*}}: "rc" = 0 to 2, %{{.*}}: "rz" = 0 to 3, %{{.*}}: "ry" = 0 to 3, %{{.*}}: "rx" = 0 to 3)
// CHECK:           te.read %[[PAD]][
// CHECK:         sched.schedule {
// CHECK:           sched.vectorize %ow.inner
// CHECK-NEXT:      %[[ROWS:.*]] = sched.fuse %{{.*}}, %o.outer, %{{.*}}, %{{.*}}
// CHECK-NOT:       sched.parallel
// CHECK:           sched.vectorize %ow_2
// CHECK-NEXT:    }
func.func @conv3d(%x: tensor<1x2x4x5x6xf32>, %w: tensor<4x2x3x3x3xf32>) -> tensor<1x4x2x2x3xf32> {
  %y = graph.fused "conv3d_0" (%x, %w) : (tensor<1x2x4x5x6xf32>, tensor<4x2x3x3x3xf32>) -> (tensor<1x4x2x2x3xf32>) {
  ^bb0(%a: tensor<1x2x4x5x6xf32>, %b: tensor<4x2x3x3x3xf32>):
    %c = graph.conv2d %a, %b {strides = array<i64: 1, 2, 2>, pads = array<i64: 0, 1, 1, 0, 0, 0>} : (tensor<1x2x4x5x6xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x2x2x3xf32>
    graph.yield %c : tensor<1x4x2x2x3xf32>
  }
  func.return %y : tensor<1x4x2x2x3xf32>
}

// -----

// A dilated 3-D average pool: window step r reads position i + 2 * r - pad; the
// divisor counts the steps inside the padded input per axis ((hi - 1 - start) // 2).
// CHECK-LABEL: func.func @pool3d_0(
// CHECK:         te.compute "avg_pool_sum"
// CHECK-NEXT:      te.reduce sum (%{{.*}}: "rd" = 0 to 2, %{{.*}}: "rh" = 0 to 2, %{{.*}}: "rw" = 0 to 2)
// CHECK:             %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        arith.muli %{{.*}}, %[[TWO]] : index
// CHECK:         te.compute "avg_pool2d"
// CHECK:           arith.floordivsi
// CHECK:           arith.divf
func.func @pool3d(%x: tensor<1x2x4x5x6xf32>) -> tensor<1x2x3x3x4xf32> {
  %y = graph.fused "pool3d_0" (%x) : (tensor<1x2x4x5x6xf32>) -> (tensor<1x2x3x3x4xf32>) {
  ^bb0(%a: tensor<1x2x4x5x6xf32>):
    %p = graph.avg_pool2d %a {kernel = array<i64: 2, 2, 2>, pads = array<i64: 1, 0, 0, 0, 0, 0>, dilations = array<i64: 2, 2, 2>, count_include_pad = true} : (tensor<1x2x4x5x6xf32>) -> tensor<1x2x3x3x4xf32>
    graph.yield %p : tensor<1x2x3x3x4xf32>
  }
  func.return %y : tensor<1x2x3x3x4xf32>
}
