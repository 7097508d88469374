// sched.tensorize: the loops under the tensorized axis become one
// loop.tensor_intrin on regions of the buffers (each a base index per buffer
// dimension; the intrinsic's operand shapes give the extents).
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop | filecheck %s

// The reduction is split and its outer loop encloses the intrinsic: the init
// nest comes first (as without tensorize), then the intrinsic updates C once
// per k.outer.
func.func @gemm(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %io, %ii = sched.split %i by 4
    %j = sched.axis %s "j"
    %jo, %ji = sched.split %j by 16
    %k = sched.axis %s "k"
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @gemm
// CHECK:         loop.for %i.outer = 0 to 2 {
// CHECK-NEXT:      %[[I0:.*]] = arith.muli %i.outer, %{{.*}} : index
// CHECK-NEXT:      loop.for %j.outer = 0 to 2 {
// CHECK-NEXT:        %[[J0:.*]] = arith.muli %j.outer, %{{.*}} : index
// CHECK-NEXT:        loop.for %i.inner = 0 to 4 {
// CHECK:               loop.for %j.inner = 0 to 16 {
// CHECK:                 memref.store %{{.*}}, %C[%{{.*}}, %{{.*}}] : memref<8x32xf32>
// CHECK:             loop.for %k.outer = 0 to 2 {
// CHECK-NEXT:          %[[K0:.*]] = arith.muli %k.outer, %{{.*}} : index
// CHECK-NEXT:          loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%[[I0]], %[[K0]]], %B[%[[K0]], %[[J0]]]) outs(%C[%[[I0]], %[[J0]]]) : memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// The intrinsic covers the whole stage (tensorized at its outermost axis): the
// region includes the whole reduction, so the init nest is emitted in front of
// the intrinsic, and every base index is 0.
func.func @whole(%A: tensor<4x8xf32>, %B: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<4x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<4x8xf32>
      %2 = te.read %B[%k, %j] : tensor<8x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<4x16xf32>
    %i = sched.axis %s "i"
    sched.tensorize %i with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @whole
// CHECK-NEXT:    loop.for %i = 0 to 4 {
// CHECK-NEXT:      loop.for %j = 0 to 16 {
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %[[ZERO]], %C[%i, %j] : memref<4x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%[[Z]], %[[Z]]], %B[%[[Z]], %[[Z]]]) outs(%C[%[[Z]], %[[Z]]]) : memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>
// CHECK-NEXT:    func.return

// -----

// int8 x int8 -> int32 with the VTA-shaped intrinsic (1x16 by 16x16): the
// batch axis b stays a loop outside the region (the intrinsic's extent-1 axis i
// is fixed at b), W is read transposed as the intrinsic reads it.
func.func @gemv_i8(%X: tensor<2x32xi8>, %W: tensor<48x32xi8>) -> tensor<2x48xi32> {
  %C = te.compute "C" (%b: "b", %j: "j") -> tensor<2x48xi32> {
    %0 = te.reduce sum (%k: "k" = 0 to 32) -> i32 {
      %1 = te.read %X[%b, %k] : tensor<2x32xi8>
      %2 = arith.extsi %1 : i8 to i32
      %3 = te.read %W[%j, %k] : tensor<48x32xi8>
      %4 = arith.extsi %3 : i8 to i32
      %5 = arith.muli %2, %4 : i32
      te.yield %5 : i32
    }
    te.yield %0 : i32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<2x48xi32>
    %j = sched.axis %s "j"
    %jo, %ji = sched.split %j by 16
    %k = sched.axis %s "k"
    %ko, %ki = sched.split %k by 16
    sched.reorder %jo, %ko, %ji, %ki
    sched.tensorize %ji with "gemv_1x16x16_i8"
  }
  func.return %C : tensor<2x48xi32>
}

// CHECK-LABEL: func.func @gemv_i8
// CHECK:         loop.for %b = 0 to 2 {
// CHECK-NEXT:      loop.for %j.outer = 0 to 3 {
// CHECK-NEXT:        %[[J0:.*]] = arith.muli %j.outer, %{{.*}} : index
// CHECK-NEXT:        loop.for %j.inner = 0 to 16 {
// CHECK:               memref.store %{{.*}}, %C[%b, %{{.*}}] : memref<2x48xi32>
// CHECK:             loop.for %k.outer = 0 to 2 {
// CHECK-NEXT:          %[[K0:.*]] = arith.muli %k.outer, %{{.*}} : index
// CHECK-NEXT:          loop.tensor_intrin "gemv_1x16x16_i8" ins(%X[%b, %[[K0]]], %W[%[[J0]], %[[K0]]]) outs(%C[%b, %[[J0]]]) : memref<2x32xi8>, memref<48x32xi8>, memref<2x48xi32>
