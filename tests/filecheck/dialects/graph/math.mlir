// Unary math of floats (ONNX Sin ... Round) and the two remainders, graph.mod (the
// divisor's sign) and graph.fmod (the dividend's), on floats and integers: printed,
// parsed again, printed identically; generic form likewise; then lowered to te.
// RUN: %roundtrip
// RUN: %generic-roundtrip
// RUN: tilecraft-opt %s -p convert-graph-to-te | filecheck %s --check-prefix=TE

func.func @math(%x: tensor<2x4xf32>, %h: tensor<4xf16>, %d: tensor<4xf64>, %i: tensor<4xi32>) -> tensor<2x4xf32> {
  %0 = graph.sin %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = graph.asinh %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = graph.round %h : (tensor<4xf16>) -> tensor<4xf16>
  %3 = graph.fmod %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %4 = graph.fmod %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %5 = graph.mod %x, %1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %6 = graph.acosh %d : (tensor<4xf64>) -> tensor<4xf64>
  func.return %5 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @math(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>, %[[H:.*]]: tensor<4xf16>, %[[D:.*]]: tensor<4xf64>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT:    %[[SIN:.*]] = graph.sin %[[X]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[ASINH:.*]] = graph.asinh %[[SIN]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = graph.round %[[H]] : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %{{.*}} = graph.fmod %[[D]], %[[D]] : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = graph.fmod %[[I]], %[[I]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[MOD:.*]] = graph.mod %[[X]], %[[ASINH]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = graph.acosh %[[D]] : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    func.return %[[MOD]] : tensor<2x4xf32>

// Each function is one math op; round halves to even (math.roundeven).
// TE-LABEL: func.func @sin_0(
// TE:         %[[V:.*]] = te.read
// TE-NEXT:    math.sin %[[V]] : f32
// TE-LABEL: func.func @asinh_1(
// TE:         math.asinh %{{.*}} : f32
// TE-LABEL: func.func @round_2(
// TE:         math.roundeven %{{.*}} : f16
// Float fmod is C's fmod: llvm.frem (xDSL's arith has no remf); integer fmod is remsi.
// TE-LABEL: func.func @fmod_3(
// TE:         %[[A:.*]] = te.read %p0
// TE-NEXT:    %[[B:.*]] = te.read %p1
// TE-NEXT:    llvm.frem %[[A]], %[[B]] : f64
// TE-LABEL: func.func @fmod_4(
// TE:         arith.remsi %{{.*}}, %{{.*}} : i32
// Float mod is fmod moved to the divisor's sign: r + b where r != 0 and the signs
// differ, a zero remainder takes b's sign (-0.0 is negf 0.0).
// TE-LABEL: func.func @mod_5(
// TE:         %[[A:.*]] = te.read %p0
// TE-NEXT:    %[[B:.*]] = te.read %p1
// TE-NEXT:    %[[R:.*]] = llvm.frem %[[A]], %[[B]] : f32
// TE-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// TE-NEXT:    %[[IS0:.*]] = arith.cmpf oeq, %[[R]], %[[ZERO]] : f32
// TE:         arith.negf %[[ZERO]] : f32
// TE:         %[[SUM:.*]] = arith.addf %[[R]], %[[B]] : f32
// TE-LABEL: func.func @acosh_6(
// TE:         math.acosh %{{.*}} : f64
