// RUN: tilecraft-opt %s --split-input-file -p canonicalize | filecheck %s
// With a weight store: batch_norm folds into a conv whose weight is in the store;
// the scaled weight (288 elements) goes into the store, the bias (8) is inline.
// RUN: python -c "import numpy as np; np.savez('%t.npz', **{'conv.weight': np.ones((8, 4, 3, 3), np.float32), 'bn.scale': np.arange(8, dtype=np.float32), 'bn.bias': np.full(8, 2, np.float32), 'bn.mean': np.ones(8, np.float32), 'bn.var': np.full(8, 4, np.float32)})"
// RUN: sed -e 's|@STORE@|%t.npz|' %S/Inputs/canonicalize-store.mlir | tilecraft-opt -p canonicalize --weights-out %t.out.npz | filecheck %s --check-prefix=STORE
// RUN: python -c "import numpy as np; s = np.load('%t.out.npz'); print(sorted(s.files)); print(s['conv.weight.bn'][:, 0, 0, 0].tolist())" | filecheck %s --check-prefix=ARRAYS

// STORE-LABEL: func.func @store
// STORE-NEXT:    %[[W:.*]] = graph.weight "conv.weight.bn" : tensor<8x4x3x3xf32>
// bias = b - mean * scale / sqrt(var) = 2 - c / 2 for channel c
// STORE-NEXT:    %[[B:.*]] = graph.constant dense<[2.000000e+00, 1.500000e+00, 1.000000e+00, 5.000000e-01, 0.000000e+00, -5.000000e-01, -1.000000e+00, -1.500000e+00]> : tensor<8xf32>
// STORE-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]], %[[B]]
// STORE-NEXT:    func.return %[[Y]]
// ARRAYS: ['conv.weight.bn']
// The weight of output channel c scales by c / sqrt(4).
// ARRAYS-NEXT: [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]

// The graph dialect's canonicalization patterns (dialects/graph_canonicalization.py)
// and op folders (dialects/graph_folders.py), run by xDSL's canonicalize.

// batch_norm after a conv2d that feeds nothing else folds into it: with
// a = scale / sqrt(var + eps) = [1, 0.5] and b = bias - mean * a = [2, 2], the
// weight [4, 2] scales to [4, 1] and the new bias is b.
func.func @conv_bn(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<[[[[4.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<2xf32>
  %m = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = graph.constant dense<3.0> : tensor<2xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[4.000000e+00]]], [{{\[}}[1.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<2.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]], %[[B]] : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// The folded conv keeps its own properties (strides, pads): only weight and bias change.
func.func @strided_conv_bn(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<[[[[4.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<2xf32>
  %m = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = graph.constant dense<3.0> : tensor<2xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %z : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @strided_conv_bn
// CHECK:         graph.conv2d %x, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>}
// CHECK-NOT:     graph.batch_norm

// -----

// A clip with a bound is no identity.
func.func @bounded_clip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.clip %x {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func @bounded_clip
// CHECK-NEXT:    %[[C:.*]] = graph.clip %x {min = 0.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[C]]

// -----

// The conv2d has a second user, so its weight must stay (folding into the
// producer must not fire): batch_norm becomes a mul and an add of per-channel
// constants shaped [C, 1, 1].
func.func @conv_shared(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = graph.constant dense<[[[[4.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %y = graph.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<2xf32>
  %m = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = graph.constant dense<3.0> : tensor<2xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @conv_shared
// CHECK:         %[[Y:.*]] = graph.conv2d %x, %{{.*}} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.constant dense<{{\[}}[{{\[}}1.000000e+00]], [{{\[}}5.000000e-01]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<2.000000e+00> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[Y]], %[[A]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.add %[[M]], %[[B]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[Y]]
// CHECK-NOT:     graph.batch_norm

// -----

// dense -> batch_norm on [N, C]: the weight rows and the existing bias scale.
func.func @dense_bn(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = graph.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %y = graph.dense %x, %w, %c : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %s = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<2xf32>
  %m = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = graph.constant dense<3.0> : tensor<2xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %z : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @dense_bn
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.500000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// bias * a + b = [1 * 1 + 2, 1 * 0.5 + 2]
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[3.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.dense %x, %[[W]], %[[B]]
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Parameters that are function arguments: a and b are computed by graph ops.
func.func @unknown(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %z = graph.batch_norm %x, %s, %b, %m, %v : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %z : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @unknown
// CHECK-NEXT:    %[[E:.*]] = graph.constant dense<1.000000e-05> : tensor<2xf32>
// CHECK-NEXT:    %[[VE:.*]] = graph.add %v, %[[E]]
// CHECK-NEXT:    %[[R:.*]] = graph.sqrt %[[VE]]
// CHECK-NEXT:    %[[A:.*]] = graph.div %s, %[[R]]
// CHECK-NEXT:    %[[MA:.*]] = graph.mul %m, %[[A]]
// CHECK-NEXT:    %[[B:.*]] = graph.sub %b, %[[MA]]
// CHECK-NEXT:    %[[AR:.*]] = graph.reshape %[[A]] {shape = array<i64: 2, 1, 1>} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[BR:.*]] = graph.reshape %[[B]] {shape = array<i64: 2, 1, 1>} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %x, %[[AR]]
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[M]], %[[BR]]
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Identities go; look-alikes that move or change data stay.
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %r = graph.reshape %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %one = graph.constant dense<1.0> : tensor<3xf32>
  %m = graph.mul %t, %one : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %a = graph.add %zero, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = graph.pad %a {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.clip %p : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %swap = graph.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %two = graph.constant dense<2.0> : tensor<3xf32>
  %d = graph.mul %c, %two : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %c, %swap, %d : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    %[[S:.*]] = graph.transpose %x {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.mul %x, %[[T]]
// CHECK-NEXT:    func.return %x, %[[S]], %[[D]]

// -----

// More identities: a cast to its own type, a layout_transform to its own layout,
// a full slice, a one-piece concat. A cast that changes the type stays.
func.func @more_identities(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) {
  %c = graph.cast %x {to = f32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %l = graph.layout_transform %c {src = "NCHW", dst = "NCHW"} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %s = graph.slice %l {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %k = graph.concat %s {axis = 1 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %i = graph.cast %k {to = i64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xi64>
  func.return %k, %i : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
}

// CHECK-LABEL: func.func @more_identities
// CHECK-NEXT:    %[[I:.*]] = graph.cast %x {to = i64}
// CHECK-NEXT:    func.return %x, %[[I]]

// -----

// A slice that drops elements, a pad that pads, a transpose that moves axes and a
// mul by a splat 1 that broadcasts its operand are not identities.
func.func @look_alikes(%x: tensor<2x2xf32>, %y: tensor<2xf32>) -> (tensor<2x1xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 1>, axes = array<i64: 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %p = graph.pad %x {pads = array<i64: 0, 1, 0, 1>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  %t = graph.transpose %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %one = graph.constant dense<1.0> : tensor<2x2xf32>
  %m = graph.mul %y, %one : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %s, %p, %t, %m : tensor<2x1xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @look_alikes
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.pad %x
// CHECK-NEXT:    graph.transpose %x
// CHECK-NEXT:    graph.constant dense<1.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    graph.mul %y

// -----

// A conv2d whose weight is an argument cannot absorb the batch_norm (folding
// into the producer must not fire): it becomes a scale and shift.
func.func @conv_unknown_weight(%x: tensor<1x1x4x4xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %y = graph.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<3.0> : tensor<2xf32>
  %m = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = graph.constant dense<3.0> : tensor<2xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @conv_unknown_weight
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %w :
// CHECK-NEXT:    %[[A:.*]] = graph.constant dense<{{\[}}[{{\[}}1.000000e+00]], [{{\[}}5.000000e-01]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<2.000000e+00> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[Y]], %[[A]]
// CHECK-NEXT:    %[[R:.*]] = graph.add %[[M]], %[[B]]
// CHECK-NEXT:    func.return %[[R]]

// -----

// Op folders: ops on constants fold to the constant they compute, chains
// collapse; an op on an argument does not fold.
func.func @fold_chain(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a = graph.constant dense<2.0> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -3.0]> : tensor<2xf32>
  %m = graph.mul %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = graph.relu %m : (tensor<2xf32>) -> tensor<2xf32>
  %y = graph.add %r, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %n = graph.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y, %n : tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[2.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[C]], %x
// CHECK-NEXT:    %[[N:.*]] = graph.neg %x
// CHECK-NEXT:    func.return %[[Y]], %[[N]]

// -----

// Folds make no weights: a result larger than 16 elements is left to
// fold-constants, which can put it in the weight store.
func.func @fold_large() -> tensor<4x8xf32> {
  %a = graph.constant dense<1.0> : tensor<4x8xf32>
  %e = graph.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fold_large
// CHECK-NEXT:    %[[A:.*]] = graph.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[A]]
// CHECK-NEXT:    func.return %[[E]]

// -----

// Integer and multi-result ops fold too.
func.func @fold_ints() -> (tensor<2xi64>, tensor<1xi64>) {
  %a = graph.constant dense<[4, 6, 8]> : tensor<3xi64>
  %b = graph.constant dense<2> : tensor<3xi64>
  %q = graph.div %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %p, %r = graph.split %q {axis = 0 : i64, sizes = array<i64: 2, 1>} : (tensor<3xi64>) -> (tensor<2xi64>, tensor<1xi64>)
  func.return %p, %r : tensor<2xi64>, tensor<1xi64>
}

// CHECK-LABEL: func.func @fold_ints
// CHECK-NEXT:    %[[P:.*]] = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<4> : tensor<1xi64>
// CHECK-NEXT:    func.return %[[P]], %[[R]]

// -----

// A conv2d whose outer kernel taps read only padding (TrimConvWindow): a 3x3 conv
// with padding 1 on a 1x1 input is the 1x1 conv of its centre tap.
func.func @trim_to_centre(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  func.return %y : tensor<1x1x1x1xf32>
}

// CHECK-LABEL: func.func @trim_to_centre
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<5.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]] : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Stride 2 on a 2x2 input: one output, whose window's first row and column are
// padding; a 2x2 kernel without padding remains. On a 1x5 input only the middle
// row is cut: the columns keep their taps and padding.
func.func @trim_strided(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  func.return %y : tensor<1x1x1x1xf32>
}

func.func @trim_rows(%x: tensor<1x1x1x5xf32>) -> tensor<1x1x1x5xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x5xf32>
  func.return %y : tensor<1x1x1x5xf32>
}

// CHECK-LABEL: func.func @trim_strided
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}5.000000e+00, 6.000000e+00], [8.000000e+00, 9.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]] {strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
// CHECK-LABEL: func.func @trim_rows
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]] {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x1x1x5xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x1x5xf32>

// -----

// Trimmed, then a batch_norm folds into the trimmed weight (either order).
func.func @trim_then_batch_norm(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  %s = graph.constant dense<2.0> : tensor<1xf32>
  %b = graph.constant dense<1.0> : tensor<1xf32>
  %m = graph.constant dense<0.0> : tensor<1xf32>
  %v = graph.constant dense<1.0> : tensor<1xf32>
  %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x1x1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x1xf32>
  func.return %z : tensor<1x1x1x1xf32>
}

// CHECK-LABEL: func.func @trim_then_batch_norm
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+01> : tensor<1x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %x, %[[W]], %[[B]] : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// A weight that is not a constant (an argument here, a 1-D conv's unsqueezed
// weight) is cut by a graph.slice.
func.func @trim_argument(%a: tensor<1x1x1x1xf32>, %aw: tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32> {
  %z = graph.conv2d %a, %aw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  func.return %z : tensor<1x1x1x1xf32>
}

// CHECK-LABEL: func.func @trim_argument
// CHECK-NEXT:    %[[W:.*]] = graph.slice %aw {starts = array<i64: 1, 1>, ends = array<i64: 2, 2>, axes = array<i64: 2, 3>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.conv2d %a, %[[W]] : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>

// -----

// Left alone: every tap reads the input somewhere (4x4); an end pad that would
// have to be negative (3 rows, stride 2, padding only at the top: the last row
// is read, the window's first row never); a blocked conv (after alter-layout).
func.func @trim_nothing(%x: tensor<1x1x4x4xf32>, %t: tensor<1x1x3x3xf32>, %bx: tensor<1x1x1x1x16xf32>, %bw: tensor<1x1x3x3x16x16xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1x16xf32>) {
  %w = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %u = graph.conv2d %t, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  %v = graph.conv2d %bx, %bw {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o"} : (tensor<1x1x1x1x16xf32>, tensor<1x1x3x3x16x16xf32>) -> tensor<1x1x1x1x16xf32>
  func.return %y, %u, %v : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1x16xf32>
}

// CHECK-LABEL: func.func @trim_nothing
// CHECK:         graph.conv2d %x, %{{.*}} {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>)
// CHECK-NEXT:    graph.conv2d %t, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>)
// CHECK-NEXT:    graph.conv2d %bx, %bw {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o"}
