// RUN: tilecraft-opt %s --split-input-file -p fold-empty-tensors | filecheck %s

// An empty argument is passed but never read; what reads it is an empty constant
// when its result is empty too, and goes.
func.func @elementwise(%x: tensor<2x0xf32>) -> tensor<0x2xf32> {
  %e = graph.exp %x : (tensor<2x0xf32>) -> tensor<2x0xf32>
  %t = graph.transpose %e {perm = array<i64: 1, 0>} : (tensor<2x0xf32>) -> tensor<0x2xf32>
  func.return %t : tensor<0x2xf32>
}

// CHECK-LABEL: func.func @elementwise(%x: tensor<2x0xf32>) -> tensor<0x2xf32> {
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<> : tensor<0x2xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<0x2xf32>

// -----

// A reduction over an empty axis: its value on the empty set, numpy's `initial`
// and ONNX's (sum 0, prod 1, max -inf, min +inf, mean NaN; integers: the type's
// lowest and highest value).
func.func @reductions(%x: tensor<2x0x4xf32>, %i: tensor<0x3xi32>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xi32>, tensor<3xi32>) {
  %s = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %p = graph.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %mx = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %mn = graph.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %me = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %imx = graph.reduce_max %i {axes = array<i64: 0>, keepdims = false} : (tensor<0x3xi32>) -> tensor<3xi32>
  %imn = graph.reduce_min %i {axes = array<i64: 0>, keepdims = false} : (tensor<0x3xi32>) -> tensor<3xi32>
  func.return %s, %p, %mx, %mn, %me, %imx, %imn : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xi32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @reductions
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<0.000000e+00> : tensor<2x1x4xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.constant dense<1.000000e+00> : tensor<2x4xf32>
// -inf and +inf
// CHECK-NEXT:    %[[MX:.*]] = graph.constant dense<0xff800000> : tensor<2x4xf32>
// CHECK-NEXT:    %[[MN:.*]] = graph.constant dense<0x7f800000> : tensor<2x4xf32>
// NaN (printed element by element: NaN is not equal to itself)
// CHECK-NEXT:    %[[ME:.*]] = graph.constant dense<{{\[\[}}0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000], {{.*}} : tensor<2x4xf32>
// CHECK-NEXT:    %[[IMX:.*]] = graph.constant dense<-2147483648> : tensor<3xi32>
// CHECK-NEXT:    %[[IMN:.*]] = graph.constant dense<2147483647> : tensor<3xi32>
// CHECK-NEXT:    func.return %[[S]], %[[P]], %[[MX]], %[[MN]], %[[ME]], %[[IMX]], %[[IMN]]

// -----

// A reduction over non-empty axes only of an empty tensor is empty itself.
func.func @reduce_keeps_the_empty_axis(%x: tensor<2x0x4xf32>) -> tensor<2x0x1xf32> {
  %s = graph.reduce_sum %x {axes = array<i64: 2>} : (tensor<2x0x4xf32>) -> tensor<2x0x1xf32>
  func.return %s : tensor<2x0x1xf32>
}

// CHECK-LABEL: func.func @reduce_keeps_the_empty_axis
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<> : tensor<2x0x1xf32>
// CHECK-NEXT:    func.return %[[S]]

// -----

// Concat drops its empty operands (one left: that operand itself).
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x0xf32>, %c: tensor<2x1xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %k = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %o = graph.concat %b, %a {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %k, %o : tensor<2x4xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %[[K:.*]] = graph.concat %a, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[K]], %a

// -----

// Split: the empty pieces are constants, the others a split of the rest (or the
// input itself when one piece is all of it).
func.func @split(%x: tensor<5x2xf32>) -> (tensor<2x2xf32>, tensor<0x2xf32>, tensor<3x2xf32>, tensor<0x2xf32>, tensor<5x2xf32>) {
  %a, %b, %c = graph.split %x {sizes = array<i64: 2, 0, 3>} : (tensor<5x2xf32>) -> (tensor<2x2xf32>, tensor<0x2xf32>, tensor<3x2xf32>)
  %d, %e = graph.split %x {sizes = array<i64: 0, 5>} : (tensor<5x2xf32>) -> (tensor<0x2xf32>, tensor<5x2xf32>)
  func.return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<0x2xf32>, tensor<3x2xf32>, tensor<0x2xf32>, tensor<5x2xf32>
}

// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[A:.*]], %[[C:.*]] = graph.split %x {sizes = array<i64: 2, 3>}
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<> : tensor<0x2xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.constant dense<> : tensor<0x2xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]], %x

// -----

// K = 0: a matmul is zeros, a dense its bias broadcast.
func.func @contractions(%a: tensor<3x0xf32>, %b: tensor<0x4xf32>, %w: tensor<4x0xf32>, %bias: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %m = graph.matmul %a, %b : (tensor<3x0xf32>, tensor<0x4xf32>) -> tensor<3x4xf32>
  %d = graph.dense %a, %w, %bias : (tensor<3x0xf32>, tensor<4x0xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %n = graph.dense %a, %w : (tensor<3x0xf32>, tensor<4x0xf32>) -> tensor<3x4xf32>
  func.return %m, %d, %n : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @contractions
// CHECK-NEXT:    %[[M:.*]] = graph.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.broadcast_to %bias {shape = array<i64: 3, 4>} : (tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[M]], %[[D]], %[[N]]

// -----

// Padding an empty tensor gives the padding value; an op whose operands are all
// known (empty or constant) is folded by the graph evaluator (a convolution over
// no channels: zeros).
func.func @pad_and_evaluated(%x: tensor<0x2xf32>, %i: tensor<1x0x4x4xf32>, %k: tensor<2x0x3x3xf32>) -> (tensor<2x2xf32>, tensor<1x2x2x2xf32>) {
  %p = graph.pad %x {pads = array<i64: 1, 0, 1, 0>, value = 7.0 : f64} : (tensor<0x2xf32>) -> tensor<2x2xf32>
  %c = graph.conv2d %i, %k : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>) -> tensor<1x2x2x2xf32>
  func.return %p, %c : tensor<2x2xf32>, tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @pad_and_evaluated
// CHECK-NEXT:    %[[P:.*]] = graph.constant dense<7.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<0.000000e+00> : tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %[[P]], %[[C]]

// -----

// Nothing empty: nothing changes. An op on an empty tensor the pass cannot fold
// (the bias is not known) stays for check-graph-level to report.
func.func @unchanged(%x: tensor<3xf32>, %i: tensor<1x0x4x4xf32>, %k: tensor<2x0x3x3xf32>, %b: tensor<2xf32>) -> (tensor<3xf32>, tensor<1x2x2x2xf32>) {
  %r = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  %c = graph.conv2d %i, %k, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %r, %c : tensor<3xf32>, tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT:    %[[I:.*]] = graph.constant dense<> : tensor<1x0x4x4xf32>
// CHECK-NEXT:    %[[K:.*]] = graph.constant dense<> : tensor<2x0x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[I]], %[[K]], %b
// CHECK-NEXT:    func.return %[[R]], %[[C]]

// -----

// A scatter of no updates is its data.
func.func @scatter(%x: tensor<4x3xf32>, %i: tensor<0x1xi64>, %u: tensor<0x3xf32>, %j: tensor<0x3xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %n = graph.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<0x1xi64>, tensor<0x3xf32>) -> tensor<4x3xf32>
  %e = graph.scatter_elements %x, %j, %u {reduction = #graph<scatter_reduction add>} : (tensor<4x3xf32>, tensor<0x3xi64>, tensor<0x3xf32>) -> tensor<4x3xf32>
  func.return %n, %e : tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @scatter
// CHECK-NEXT:    func.return %x, %x : tensor<4x3xf32>, tensor<4x3xf32>
