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

// -----

// 2 x 8192 floats of shared memory: 64 KiB, over the 48 KiB of a block.
// CHECK: convert-loop-to-gpu: the kernel of loop '%b' needs 65536 bytes of shared memory with 'S2' ('S1' 32768, 'S2' 32768 bytes); a block has at most 49152
func.func @too_much_shared(%A: memref<8192xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    %S1 = loop.alloc "S1" shared : memref<8192xf32>
    %S2 = loop.alloc "S2" shared : memref<8192xf32>
    loop.for %t = 0 to 1024 threadIdx.x {
      loop.for %k = 0 to 8 {
        %c1024 = arith.constant 1024 : index
        %o = arith.muli %k, %c1024 : index
        %i = arith.addi %o, %t : index
        %a = memref.load %A[%i] : memref<8192xf32>
        memref.store %a, %S1[%i] : memref<8192xf32>
        memref.store %a, %S2[%i] : memref<8192xf32>
      }
    }
  }
  func.return
}

// -----

// A shared tile every thread of the block would write whole.
// CHECK: convert-loop-to-gpu: shared buffer 'S' is written by every thread of the block alike: its stage's loops are not bound to the block's threads
func.func @shared_not_bound(%A: memref<64xf32>, %C: memref<64xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    loop.for %t = 0 to 64 threadIdx.x {
      %S = loop.alloc "S" shared : memref<64xf32>
      loop.for %k = 0 to 64 {
        %a = memref.load %A[%k] : memref<64xf32>
        memref.store %a, %S[%k] : memref<64xf32>
      }
      %s = memref.load %S[%t] : memref<64xf32>
      memref.store %s, %C[%t] : memref<64xf32>
    }
  }
  func.return
}

// -----

// CHECK: convert-loop-to-gpu: shared buffer 'S' is outside every kernel
func.func @shared_on_host(%A: memref<64xf32>) {
  %S = loop.alloc "S" shared : memref<64xf32>
  loop.for %t = 0 to 64 threadIdx.x {
    %a = memref.load %A[%t] : memref<64xf32>
    memref.store %a, %S[%t] : memref<64xf32>
  }
  func.return
}

// -----

// The threads bound again, more of them than the block has.
// CHECK: convert-loop-to-gpu: loop '%l' is bound to threadIdx.x with 64 iterations inside loop '%t', which binds it with 32
func.func @rebound_wider(%A: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %t = 0 to 32 threadIdx.x {
    loop.for %k = 0 to 2 {
      loop.for %l = 0 to 64 threadIdx.x {
        memref.store %one, %A[%l] : memref<64xf32>
      }
    }
  }
  func.return
}
