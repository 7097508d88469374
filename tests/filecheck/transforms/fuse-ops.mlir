// RUN: tilecraft-opt %s --split-input-file -p fuse-ops | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'fuse-ops{enabled=false}' | filecheck %s --check-prefix=OFF
// RUN: tilecraft-opt %s --split-input-file -p 'fuse-ops{max-depth=2}' | filecheck %s --check-prefix=DEPTH

// conv2d takes its elementwise consumers: bias add and relu. Weights and
// constants stay outside and come in as operands.
func.func @conv_add_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
  %b = graph.constant dense<1.0> : tensor<4x1x1xf32>
  %y = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %z = graph.add %y, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %z : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @conv_add_relu
// CHECK-NEXT:    %[[W:.*]] = graph.weight "conv.weight"
// CHECK-NEXT:    %[[B:.*]] = graph.constant
// CHECK-NEXT:    %[[R:.*]] = graph.fused "fused_conv2d_add_relu" (%x, %[[W]], %[[B]]) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4x1x1xf32>) -> (tensor<1x4x6x6xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[X1:.*]]: tensor<1x3x8x8xf32>, %[[W1:.*]]: tensor<4x3x3x3xf32>, %[[B1:.*]]: tensor<4x1x1xf32>):
// CHECK-NEXT:      %[[Y:.*]] = graph.conv2d %[[X1]], %[[W1]]
// CHECK-NEXT:      %[[Z:.*]] = graph.add %[[Y]], %[[B1]]
// CHECK-NEXT:      %[[R1:.*]] = graph.relu %[[Z]]
// CHECK-NEXT:      graph.yield %[[R1]] : tensor<1x4x6x6xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]

// Fusion off: every op is its own group.
// OFF-LABEL: func.func @conv_add_relu
// OFF:         graph.fused "fused_conv2d"
// OFF:         graph.fused "fused_add"
// OFF:         graph.fused "fused_relu"

// At most two ops per group: relu is left out.
// DEPTH-LABEL: func.func @conv_add_relu
// DEPTH:         graph.fused "fused_conv2d_add"
// DEPTH:         graph.fused "fused_relu"

// -----

// dense -> add -> gelu, twice: the second group gets a unique name.
func.func @mlp(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %d1 = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a1 = graph.add %d1, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %g1 = graph.gelu %a1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %d2 = graph.dense %g1, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a2 = graph.add %d2, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %g2 = graph.gelu %a2 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %g2 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @mlp
// CHECK-NEXT:    %[[G1:.*]] = graph.fused "fused_dense_add_gelu" (%x, %w, %b)
// CHECK:         %[[G2:.*]] = graph.fused "fused_dense_add_gelu_1" (%[[G1]], %w, %b)
// CHECK:         func.return %[[G2]]

// -----

// Two anchors never share a group: conv -> relu -> conv -> relu is two groups,
// and of two convs meeting in an add, only the first takes the add.
func.func @two_convs(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %c1 = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r1 = graph.relu %c1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = graph.conv2d %r1, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r2 = graph.relu %c2 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c3 = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c4 = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %s = graph.add %c3, %c4 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r2, %s : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @two_convs
// CHECK-NEXT:    %[[R1:.*]] = graph.fused "fused_conv2d_relu" (%x, %w)
// CHECK:         %[[R2:.*]] = graph.fused "fused_conv2d_relu_1" (%[[R1]], %w)
// The lone conv now comes first: it feeds the group of the other.
// CHECK:         %[[C4:.*]] = graph.fused "fused_conv2d" (%x, %w)
// CHECK:         %[[S:.*]] = graph.fused "fused_conv2d_add" (%x, %w, %[[C4]]) :
// CHECK-NOT:     graph.fused
// CHECK:         func.return %[[R2]], %[[S]]

// -----

// Opaque softmax stands alone, and nothing fuses across it.
func.func @softmax(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %s = graph.softmax %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = graph.exp %s : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %e : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    graph.fused "fused_dense"
// CHECK:         graph.fused "fused_softmax"
// CHECK:         graph.fused "fused_exp"

// -----

// A producer whose consumers never meet again (both are function results) has
// no post-dominator: fusing it with either would make the other read a value
// computed inside someone else's kernel, so conv2d stands alone.
func.func @two_consumers(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>) {
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = graph.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  func.return %r, %p : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @two_consumers
// CHECK-NEXT:    %[[C:.*]] = graph.fused "fused_conv2d" (%x, %w)
// CHECK:         graph.fused "fused_relu" (%[[C]])
// CHECK:         graph.fused "fused_max_pool2d" (%[[C]])

// -----

// Diamonds: a conv whose two elementwise branches meet in an add is one group;
// with an opaque op on one branch, fusing exp with the add would make a cycle
// through softmax, so they stay apart.
func.func @diamonds(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %v: tensor<4x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<4x8xf32>) {
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %g = graph.sigmoid %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %s = graph.add %r, %g : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %e = graph.exp %v : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = graph.softmax %e : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.add %e, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s, %t : tensor<1x4x8x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @diamonds
// CHECK-NEXT:    %[[S:.*]] = graph.fused "fused_conv2d_relu_sigmoid_add" (%x, %w)
// CHECK:         %[[E:.*]] = graph.fused "fused_exp" (%v)
// CHECK:         %[[M:.*]] = graph.fused "fused_softmax" (%[[E]])
// CHECK:         %[[T:.*]] = graph.fused "fused_add" (%[[E]], %[[M]])
// CHECK:         func.return %[[S]], %[[T]]

// -----

// A reduction takes its injective and elementwise producers; what it produces
// does not join it.
func.func @reduce(%x: tensor<4x8xf32>) -> (tensor<8x1xf32>, tensor<4x1xf32>) {
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %s = graph.reduce_sum %t {axes = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %e = graph.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = graph.reduce_max %e {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %n = graph.neg %m : (tensor<4x1xf32>) -> tensor<4x1xf32>
  func.return %s, %n : tensor<8x1xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    graph.fused "fused_transpose_reduce_sum" (%x)
// CHECK:         %[[M:.*]] = graph.fused "fused_exp_reduce_max" (%x)
// CHECK:         graph.fused "fused_neg" (%[[M]])

// -----

// An anchor's group yields a value that is also used outside it.
func.func @escaping(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %d = graph.dense %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a = graph.add %d, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %t = graph.tanh %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %a, %t : tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @escaping
// CHECK-NEXT:    %[[A:.*]] = graph.fused "fused_dense_add" (%x, %w, %b)
// CHECK:           graph.yield %{{.*}} : tensor<2x8xf32>
// CHECK:         %[[T:.*]] = graph.fused "fused_tanh" (%[[A]])
// CHECK:         func.return %[[A]], %[[T]]

// -----

// Dead ops are dropped rather than grouped (dce cannot remove a graph.fused).
func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = graph.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %[[R:.*]] = graph.fused "fused_relu" (%x)
// CHECK-NOT:     graph.exp
// CHECK-NOT:     graph.neg
