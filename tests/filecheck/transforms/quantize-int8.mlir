// RUN: tilecraft-opt %s --split-input-file -p quantize-int8 | filecheck %s

// Two calibrated convs with a relu between: the first quantizes its float input
// (max |x| 4 -> scale 2^-4), its weight (max |w| 2 -> 2^-5) and its bias (to the
// accumulator's scale 2^-9); the second reads the first's accumulator through relu
// and requantize (2^-9 -> its input scale 2^-2: shift 7), with no float between.
func.func @chain(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = graph.constant dense<[[[[0.5]], [[-1.0]]], [[[0.25]], [[2.0]]], [[[1.5]], [[0.0]]]]> : tensor<3x2x1x1xf32>
  %b = graph.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %c = graph.conv2d %x, %w, %b {tc.input_absmax = 4.0 : f64} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %r = graph.relu %c : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %w2 = graph.constant dense<[[[[1.0]], [[0.5]], [[-0.5]]], [[[0.125]], [[1.0]], [[1.0]]], [[[2.0]], [[-2.0]], [[0.5]]]]> : tensor<3x3x1x1xf32>
  %d = graph.conv2d %r, %w2 {tc.input_absmax = 16.0 : f64} : (tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x4x4xf32>
  func.return %d : tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}16]], {{\[\[}}-32]]], {{\[\[\[}}8]], {{\[\[}}64]]], {{\[\[\[}}48]], {{\[\[}}0]]]]> : tensor<3x2x1x1xi8>
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<1.600000e+01> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %x, %[[S]]
// CHECK-NEXT:    %[[R:.*]] = graph.round %[[M]]
// CHECK-NEXT:    %[[C:.*]] = graph.clip %[[R]] {min = -1.280000e+02 : f32, max = 1.270000e+02 : f32}
// CHECK-NEXT:    %[[Q:.*]] = graph.cast %[[C]] {to = i8} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi8>
// CHECK-NEXT:    %[[QI:.*]] = graph.cast %[[Q]] {to = i32}
// CHECK-NEXT:    %[[WI:.*]] = graph.cast %[[W]] {to = i32}
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[51, -102, 154]> : tensor<3xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.conv2d %[[QI]], %[[WI]], %[[B]] : (tensor<1x2x4x4xi32>, tensor<3x2x1x1xi32>, tensor<3xi32>) -> tensor<1x3x4x4xi32>
// CHECK-NEXT:    %[[W2:.*]] = graph.constant {{.*}} : tensor<3x3x1x1xi8>
// CHECK-NEXT:    %[[RELU:.*]] = graph.relu %[[ACC]] : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xi32>
// CHECK-NEXT:    %[[RQ:.*]] = graph.requantize %[[RELU]] {shift = 7 : i64, to = i8} : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xi8>
// CHECK-NEXT:    %[[RQI:.*]] = graph.cast %[[RQ]] {to = i32}
// CHECK-NEXT:    %[[W2I:.*]] = graph.cast %[[W2]] {to = i32}
// CHECK-NEXT:    %[[ACC2:.*]] = graph.conv2d %[[RQI]], %[[W2I]] : (tensor<1x3x4x4xi32>, tensor<3x3x1x1xi32>) -> tensor<1x3x4x4xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[ACC2]] {to = f32}
// CHECK-NEXT:    %[[SC:.*]] = graph.constant dense<7.812500e-03> : tensor<f32>
// CHECK-NEXT:    %d = graph.mul %[[F]], %[[SC]]
// CHECK-NEXT:    func.return %d

// -----

// A dense quantizes the same way; an anchor calibration did not annotate stays float.
func.func @dense(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = graph.constant dense<[[1.0, -1.0, 0.5, 0.25], [0.0, 2.0, -2.0, 1.0]]> : tensor<2x4xf32>
  %a = graph.dense %x, %w {tc.input_absmax = 1.0 : f64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  %b = graph.dense %y, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// CHECK-LABEL: func.func @dense(
// CHECK:         graph.dense %{{.*}}, %{{.*}} : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x2xi32>
// CHECK:         graph.dense %y, %{{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>

// -----

// A quantize with a finer scale than the accumulator it reads (max |input| 0.001:
// scale 2^-17, below the accumulator's 2^-12) cannot be a right shift: the float
// round trip stays.
func.func @finer(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = graph.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]> : tensor<4x4xf32>
  %a = graph.dense %x, %w {tc.input_absmax = 2.0 : f64} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %b = graph.dense %a, %w {tc.input_absmax = 0.001 : f64} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  func.return %b : tensor<1x4xf32>
}

// CHECK-LABEL: func.func @finer(
// CHECK-NOT:     graph.requantize
// CHECK:         graph.round
// CHECK:         graph.round
// CHECK-NOT:     graph.requantize
