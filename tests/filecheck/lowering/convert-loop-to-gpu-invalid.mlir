// RUN: tilecraft-opt %s -p convert-loop-to-gpu --split-input-file --verify-diagnostics | filecheck %s

// CHECK: convert-loop-to-gpu: this kernel runs 2048 threads per block (threadIdx.x 32 x threadIdx.y 64); a block holds at most 1024
func.func @too_many_threads(%A: memref<32x64xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %x = 0 to 32 threadIdx.x {
    loop.for %y = 0 to 64 threadIdx.y {
      memref.store %one, %A[%x, %y] : memref<32x64xf32>
    }
  }
  func.return
}

// -----

// A thread-bound loop under a serial one inside the kernel would need barriers.
// CHECK: convert-loop-to-gpu: loop '%t' bound to threadIdx.x is inside loop '%k', which is not bound
func.func @serial_between(%A: memref<4x8x32xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %b = 0 to 4 blockIdx.x {
    loop.for %k = 0 to 8 {
      loop.for %t = 0 to 32 threadIdx.x {
        memref.store %one, %A[%b, %k, %t] : memref<4x8x32xf32>
      }
    }
  }
  func.return
}

// -----

// A bound loop under a host loop would launch a kernel per iteration.
// CHECK: convert-loop-to-gpu: loop '%t' bound to threadIdx.x is inside loop '%i', which is not bound: the kernel would be launched once per iteration
func.func @host_loop(%A: memref<8x32xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %i = 0 to 8 {
    loop.for %t = 0 to 32 threadIdx.x {
      memref.store %one, %A[%i, %t] : memref<8x32xf32>
    }
  }
  func.return
}

// -----

// CHECK: convert-loop-to-gpu: loop '%b' bound to blockIdx.x is inside thread-bound loop '%t'
func.func @block_in_thread(%A: memref<8x32xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %t = 0 to 32 threadIdx.x {
    loop.for %b = 0 to 8 blockIdx.x {
      memref.store %one, %A[%b, %t] : memref<8x32xf32>
    }
  }
  func.return
}
