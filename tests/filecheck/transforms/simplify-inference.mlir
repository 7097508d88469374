// RUN: tilecraft-opt %s --split-input-file -p simplify-inference | filecheck %s

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

// The conv2d has a second user, so its weight must stay: batch_norm becomes a
// mul and an add of per-channel constants shaped [C, 1, 1].
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
