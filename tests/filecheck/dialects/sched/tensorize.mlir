// sched.tensorize in its custom syntax: printed, parsed again, printed identically
// (and valid: the schedule replays, the region matching the intrinsic).
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// RUN: %generic-roundtrip

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
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 4, 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %ko, %ii, %ji
    sched.tensorize %ii with "gemm_4x16x8_f32" {tag}
  }
  func.return %C : tensor<8x32xf32>
}

// CHECK: sched.tensorize %{{.*}} with "gemm_4x16x8_f32" {tag}
