// What convert-te-to-loop refuses in a tensorized stage (the region matches the
// intrinsic, but cannot be one call of it).
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop --verify-diagnostics 2>&1 | filecheck %s

// 10 rows split by 4: the last tile would run past the tensor's edge.
func.func @edge(%A: tensor<10x8xf32>, %B: tensor<8x16xf32>) -> tensor<10x16xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<10x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<10x8xf32>
      %2 = te.read %B[%k, %j] : tensor<8x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<10x16xf32>
    %i = sched.axis %s "i"
    %io, %ii = sched.split %i by 4
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: the tensorized region of 'C' runs past the edge of its tensor for some values of i.inner; choose split factors that divide the axes
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<10x16xf32>
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
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'A2' is computed inside the tensorized region of 'C' (under 'i'); attach it outside that loop.
    sched.compute_at %p, %j
    sched.tensorize %i with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<4x16xf32>
}
