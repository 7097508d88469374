// RUN: tilecraft-opt %s --split-input-file -p partition-accel | filecheck %s

// A requantized conv chain (quantize-int8's output) becomes a call of an
// accelerator function that holds the chain and its weights; the float
// dequantization of the model's result stays.
func.func @main(%x: tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xf32> {
  %w = graph.constant dense<1> : tensor<16x16x1x1xi8>
  %b = graph.constant dense<3> : tensor<16xi32>
  %xi = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x16x1x1xi8>) -> tensor<16x16x1x1xi32>
  %acc = graph.conv2d %xi, %wi, %b : (tensor<1x16x4x4xi32>, tensor<16x16x1x1xi32>, tensor<16xi32>) -> tensor<1x16x4x4xi32>
  %r = graph.relu %acc : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi32>
  %q = graph.requantize %r {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %f = graph.cast %q {to = f32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xf32>
  func.return %f : tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[Y:.*]] = func.call @accel_0(%x) : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi8>
// CHECK-NEXT:    %{{.*}} = graph.cast %[[Y]] {to = f32}
// CHECK-NEXT:    func.return
// CHECK:       func.func private @accel_0(%{{.*}}: tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi8> attributes {tc.target = "accel"} {
// CHECK:         graph.conv2d
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.requantize %{{.*}} {shift = 2 : i64, to = i8}
// CHECK-NEXT:    func.return

// -----

// What the accelerator cannot take stays: 8 channels do not fill a 16-wide block, a
// grouped conv, and a float conv.
func.func @stays(%x: tensor<1x8x4x4xi8>, %y: tensor<1x32x4x4xi8>, %z: tensor<1x16x4x4xf32>) -> (tensor<1x16x4x4xi8>, tensor<1x32x4x4xi8>, tensor<1x16x4x4xf32>) {
  %w = graph.constant dense<1> : tensor<16x8x1x1xi8>
  %xi = graph.cast %x {to = i32} : (tensor<1x8x4x4xi8>) -> tensor<1x8x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x8x1x1xi8>) -> tensor<16x8x1x1xi32>
  %a = graph.conv2d %xi, %wi : (tensor<1x8x4x4xi32>, tensor<16x8x1x1xi32>) -> tensor<1x16x4x4xi32>
  %qa = graph.requantize %a {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %g = graph.constant dense<1> : tensor<32x16x1x1xi8>
  %yi = graph.cast %y {to = i32} : (tensor<1x32x4x4xi8>) -> tensor<1x32x4x4xi32>
  %gi = graph.cast %g {to = i32} : (tensor<32x16x1x1xi8>) -> tensor<32x16x1x1xi32>
  %c = graph.conv2d %yi, %gi {groups = 2 : i64} : (tensor<1x32x4x4xi32>, tensor<32x16x1x1xi32>) -> tensor<1x32x4x4xi32>
  %qc = graph.requantize %c {shift = 2 : i64, to = i8} : (tensor<1x32x4x4xi32>) -> tensor<1x32x4x4xi8>
  %v = graph.constant dense<1.0> : tensor<16x16x1x1xf32>
  %d = graph.conv2d %z, %v : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %qa, %qc, %d : tensor<1x16x4x4xi8>, tensor<1x32x4x4xi8>, tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     func.call
// CHECK:         graph.requantize
// CHECK:         graph.requantize
// CHECK-NOT:     func.func private @accel

// -----

// Two chains read one cast of their input (two branches of a block): each kernel
// gets its own copy of the cast, computed from its own argument.
func.func @branches(%x: tensor<1x16x4x4xi8>) -> (tensor<1x16x4x4xi8>, tensor<1x16x4x4xi8>) {
  %w = graph.constant dense<1> : tensor<16x16x1x1xi8>
  %xi = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x16x1x1xi8>) -> tensor<16x16x1x1xi32>
  %a = graph.conv2d %xi, %wi : (tensor<1x16x4x4xi32>, tensor<16x16x1x1xi32>) -> tensor<1x16x4x4xi32>
  %qa = graph.requantize %a {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %b = graph.conv2d %xi, %wi : (tensor<1x16x4x4xi32>, tensor<16x16x1x1xi32>) -> tensor<1x16x4x4xi32>
  %qb = graph.requantize %b {shift = 3 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  func.return %qa, %qb : tensor<1x16x4x4xi8>, tensor<1x16x4x4xi8>
}

// CHECK-LABEL: func.func @branches(
// CHECK-NEXT:    %{{.*}} = func.call @accel_0(%x)
// CHECK-NEXT:    %{{.*}} = func.call @accel_1(%x)
// CHECK:       func.func private @accel_0(%[[X0:.*]]: tensor<1x16x4x4xi8>)
// CHECK:         graph.cast %[[X0]] {to = i32}
// CHECK:         graph.conv2d
// CHECK:       func.func private @accel_1(%[[X1:.*]]: tensor<1x16x4x4xi8>)
// CHECK:         graph.cast %[[X1]] {to = i32}
// CHECK:         graph.conv2d
