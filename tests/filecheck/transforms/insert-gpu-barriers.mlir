// RUN: tilecraft-opt %s -p convert-loop-to-gpu,insert-gpu-barriers --split-input-file | filecheck %s

// A tiled reduction: each iteration of %ko loads a tile into shared memory
// (the threads each a part), then every thread reads all of it. A barrier after
// the load (read after write) and one at the end of the iteration (the next
// load overwrites what this one read).
// CHECK-LABEL: func.func @tile(
// CHECK:       loop.for %ko = 0 to 4 {
// CHECK-NEXT:    %S = loop.alloc "S" shared
// CHECK:         loop.guard
// CHECK-NEXT:      loop.for %two
// CHECK:           memref.store %{{.*}}, %S[
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    "gpu.barrier"() : () -> ()
// CHECK-NEXT:    loop.for %k = 0 to 32 {
// CHECK:           memref.load %S[%k]
// CHECK:         }
// CHECK-NEXT:    "gpu.barrier"() : () -> ()
// CHECK-NEXT:  }
// CHECK-NOT:   gpu.barrier
// CHECK:       "gpu.return"
func.func @tile(%A: memref<128xf32>, %C: memref<2x32xf32>) {
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  loop.for %b = 0 to 2 blockIdx.x {
    loop.for %t = 0 to 32 threadIdx.x {
      %acc = loop.alloc "acc" local : memref<1xf32>
      %c0 = arith.constant 0 : index
      memref.store %zero, %acc[%c0] : memref<1xf32>
      loop.for %ko = 0 to 4 {
        %S = loop.alloc "S" shared : memref<32xf32>
        %base = arith.muli %ko, %c32 : index
        loop.for %l = 0 to 16 threadIdx.x {
          loop.for %two = 0 to 2 {
            %c2 = arith.constant 2 : index
            %x = arith.muli %l, %c2 : index
            %y = arith.addi %x, %two : index
            %g = arith.addi %base, %y : index
            %a = memref.load %A[%g] : memref<128xf32>
            memref.store %a, %S[%y] : memref<32xf32>
          }
        }
        loop.for %k = 0 to 32 {
          %s = memref.load %S[%k] : memref<32xf32>
          %old = memref.load %acc[%c0] : memref<1xf32>
          %new = arith.addf %old, %s : f32
          memref.store %new, %acc[%c0] : memref<1xf32>
        }
      }
      %r = memref.load %acc[%c0] : memref<1xf32>
      memref.store %r, %C[%b, %t] : memref<2x32xf32>
    }
  }
  func.return
}

// -----

// Written once, then read: one barrier between, none after (nothing writes
// the buffer again).
// CHECK-LABEL: func.func @once(
// CHECK:       memref.store %{{.*}}, %S[
// (just before the first read: the index arithmetic goes first)
// CHECK-NEXT:  %{{.*}} = "gpu.thread_id"
// CHECK-NEXT:  %{{.*}} = arith.constant
// CHECK-NEXT:  %{{.*}} = arith.subi
// CHECK-NEXT:  "gpu.barrier"() : () -> ()
// CHECK-NEXT:  memref.load %S
// CHECK-NOT:   gpu.barrier
// CHECK:       "gpu.return"
func.func @once(%A: memref<64xf32>, %C: memref<64xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    %S = loop.alloc "S" shared : memref<64xf32>
    loop.for %t = 0 to 64 threadIdx.x {
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %S[%t] : memref<64xf32>
    }
    loop.for %t2 = 0 to 64 threadIdx.x {
      %c63 = arith.constant 63 : index
      %m = arith.subi %c63, %t2 : index
      %s = memref.load %S[%m] : memref<64xf32>
      memref.store %s, %C[%t2] : memref<64xf32>
    }
  }
  func.return
}

// -----

// No shared buffer: no barrier, whatever the threads read and write.
// CHECK-LABEL: func.func @no_shared(
// CHECK-NOT:   gpu.barrier
// CHECK:       "gpu.return"
func.func @no_shared(%A: memref<64xf32>, %C: memref<64xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    loop.for %t = 0 to 64 threadIdx.x {
      %L = loop.alloc "L" local : memref<4xf32>
      loop.for %k = 0 to 4 {
        %a = memref.load %A[%t] : memref<64xf32>
        memref.store %a, %L[%k] : memref<4xf32>
      }
      loop.for %k2 = 0 to 4 {
        %l = memref.load %L[%k2] : memref<4xf32>
        memref.store %l, %C[%t] : memref<64xf32>
      }
    }
  }
  func.return
}

// -----

// Only read (a shared buffer nobody writes here): no barrier.
// CHECK-LABEL: func.func @read_only(
// CHECK-NOT:   gpu.barrier
// CHECK:       "gpu.return"
func.func @read_only(%C: memref<64xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    %S = loop.alloc "S" shared : memref<64xf32>
    loop.for %t = 0 to 64 threadIdx.x {
      %s = memref.load %S[%t] : memref<64xf32>
      memref.store %s, %C[%t] : memref<64xf32>
    }
  }
  func.return
}
