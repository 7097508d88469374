// Results written tensor<*xf32> get their types in program order. The input has
// unranked operands, which the graph verifier rejects before inference, so the
// pass runs unverified and a second tilecraft-opt verifies what it printed.
// RUN: tilecraft-opt %s --split-input-file --disable-verify -p infer-shapes | tilecraft-opt --split-input-file | filecheck %s

// conv2d (stride 2, pad 1) -> relu: the function's result type follows too.
func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  %w = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  %r = graph.relu %y : (tensor<*xf32>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}

// CHECK-LABEL: func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:    %[[W:.*]] = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]] {{.*}} -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[Y]] : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x4x4x4xf32>

// -----

// Broadcasting, a reduction without keepdims, a reshape with -1 and a split with
// two results.
func.func @mixed(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = graph.add %a, %b : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<*xf32>
  %m = graph.reduce_mean %s {axes = array<i64: 1>, keepdims = false} : (tensor<*xf32>) -> tensor<*xf32>
  %f = graph.reshape %m {shape = array<i64: -1>} : (tensor<*xf32>) -> tensor<*xf32>
  %p, %q = graph.split %f {axis = 0 : i64, sizes = array<i64: 3, 5>} : (tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  func.return %p, %q : tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @mixed
// CHECK-SAME:    -> (tensor<3xf32>, tensor<5xf32>)
// CHECK-NEXT:    graph.add {{.*}} -> tensor<2x3x4xf32>
// CHECK-NEXT:    graph.reduce_mean {{.*}} -> tensor<2x4xf32>
// CHECK-NEXT:    graph.reshape {{.*}} -> tensor<8xf32>
// CHECK-NEXT:    graph.split {{.*}} -> (tensor<3xf32>, tensor<5xf32>)

// -----

// A fused group: its region arguments take the operand types, its results the
// types it yields.
func.func @fused(%x: tensor<2x4xf32>) -> tensor<*xf32> {
  %w = graph.weight "fc.weight" : tensor<3x4xf32>
  %y = graph.fused "fused_dense_relu" (%x, %w) : (tensor<2x4xf32>, tensor<3x4xf32>) -> (tensor<*xf32>) {
  ^bb0(%a: tensor<*xf32>, %b: tensor<*xf32>):
    %d = graph.dense %a, %b : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    %r = graph.relu %d : (tensor<*xf32>) -> tensor<*xf32>
    graph.yield %r : tensor<*xf32>
  }
  func.return %y : tensor<*xf32>
}

// CHECK-LABEL: func.func @fused(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
// CHECK:         graph.fused "fused_dense_relu" (%x, %{{.*}}) : (tensor<2x4xf32>, tensor<3x4xf32>) -> (tensor<2x3xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<3x4xf32>):
// CHECK-NEXT:      %[[D:.*]] = graph.dense %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      %[[R:.*]] = graph.relu %[[D]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      graph.yield %[[R]] : tensor<2x3xf32>

// -----

// Already-typed IR is left as it is.
func.func @typed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @typed(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[R:.*]] = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf32>
