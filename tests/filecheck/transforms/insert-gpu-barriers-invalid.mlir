// RUN: tilecraft-opt %s -p convert-loop-to-gpu,insert-gpu-barriers --split-input-file --verify-diagnostics | filecheck %s

// A barrier that only the threads below 32 reach: the others never arrive.
// CHECK: insert-gpu-barriers: a gpu.barrier inside 'loop.guard', which only some threads of the block run
func.func @barrier_in_branch(%A: memref<64xf32>) {
  %c32 = arith.constant 32 : index
  loop.for %b = 0 to 1 blockIdx.x {
    loop.for %t = 0 to 64 threadIdx.x {
      %low = arith.cmpi slt, %t, %c32 : index
      loop.guard %low {
        "gpu.barrier"() : () -> ()
      }
    }
  }
  func.return
}

// -----

// Written and read back by other threads inside a branch some threads take:
// no barrier can go between.
// CHECK: insert-gpu-barriers: shared buffer 'S' is both written and read inside 'loop.guard'
func.func @shared_in_branch(%A: memref<64xf32>) {
  %c32 = arith.constant 32 : index
  %c63 = arith.constant 63 : index
  loop.for %b = 0 to 1 blockIdx.x {
    %S = loop.alloc "S" shared : memref<64xf32>
    loop.for %t = 0 to 64 threadIdx.x {
      %low = arith.cmpi slt, %t, %c32 : index
      loop.guard %low {
        %a = memref.load %A[%t] : memref<64xf32>
        memref.store %a, %S[%t] : memref<64xf32>
        %m = arith.subi %c63, %t : index
        %s = memref.load %S[%m] : memref<64xf32>
        memref.store %s, %A[%t] : memref<64xf32>
      }
    }
  }
  func.return
}
