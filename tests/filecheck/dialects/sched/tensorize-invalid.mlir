// sched.tensorize errors the schedule replay finds (the sched dialect's
// verifier): an unknown intrinsic, a region whose loops are annotated, split
// after tensorizing, or hold another stage. Whether the region computes what the
// intrinsic computes is convert-te-to-loop's check
// (lowering/convert-te-to-loop-tensorize-invalid.mlir).
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// An intrinsic nobody declared.
func.func @unknown(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
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
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: no tensor intrinsic is named 'gemm_9x9' (registered: gemm_4x16x8_f32, gemv_1x16x16_i8).
    sched.tensorize %ii with "gemm_9x9"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// A loop inside the region is vectorized: the intrinsic replaces it.
func.func @annotated(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
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
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: loop 'j.inner' is in the region of 'C' that sched.tensorize replaces (under 'i.inner'); it cannot be vectorized.
    sched.vectorize %ji
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// The tensorized axis split afterwards: the intrinsic's loops are gone.
func.func @split_after(%A: tensor<4x8xf32>, %B: tensor<8x16xf32>) -> tensor<4x16xf32> {
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
    // CHECK: tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: axis 'i' was split or fused after sched.tensorize; tensorize the stage's final loops.
    sched.tensorize %i with "gemm_4x16x8_f32"
    %io, %ii = sched.split %i by 2
  }
  func.return %C : tensor<4x16xf32>
}

// -----

// A producer computed at a loop inside the region: the intrinsic replaces that loop.
func.func @inside(%A: tensor<4x8xf32>, %B: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %A2 = te.compute "A2" (%i: "i", %k: "k") -> tensor<4x8xf32> {
    %a = te.read %A[%i, %k] : tensor<4x8xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<4x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %1 = te.read %A2[%i, %k] : tensor<4x8xf32>
      %2 = te.read %B[%k, %j] : tensor<8x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<4x16xf32>
    %p = sched.stage %A2 : tensor<4x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    // CHECK: tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'A2' is computed inside the tensorized region of 'C' (under 'i'); attach it outside that loop.
    sched.compute_at %p, %j
    sched.tensorize %i with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<4x16xf32>
}
