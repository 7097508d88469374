// `tilecraft-opt --annotate=cost-model`: each kernel's predicted time, FLOPs and
// bytes loaded and stored on the host (measured once and cached). The time and the
// bytes moved in from beyond L1 (tc.bytes_L2, ...) are the host's; the FLOPs and
// the bytes through L1 are the loop IR's own.

// RUN: tilecraft-opt %s --split-input-file --annotate=cost-model | filecheck %s

// The entry (it carries the memory plan's tc.arena_bytes) is not a kernel.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   tc.predicted_s
// CHECK:       func.call @scale
// 16-lane vectors: 64 x 16 multiplies, 1024 loads and stores of 4 bytes.
// CHECK-LABEL: func.func @scale
// CHECK-SAME:  tc.predicted_s = {{[0-9.e+-]+}} : f64, tc.model_flops = 1024 : i64, tc.model_bytes = 8192 : i64
func.func @main(%x: memref<1024xf32>, %y: memref<1024xf32>) attributes {tc.arena_bytes = 0 : i64} {
  func.call @scale(%x, %y) : (memref<1024xf32>, memref<1024xf32>) -> ()
  func.return
}
func.func @scale(%A: memref<1024xf32>, %B: memref<1024xf32>) {
  %two = arith.constant 2.0 : f32
  %w = arith.constant 16 : index
  loop.for %o = 0 to 64 parallel {
    %base = arith.muli %o, %w : index
    loop.for %l = 0 to 16 vectorized {
      %i = arith.addi %base, %l : index
      %a = memref.load %A[%i] : memref<1024xf32>
      %b = arith.mulf %a, %two : f32
      memref.store %b, %B[%i] : memref<1024xf32>
    }
  }
  func.return
}

// -----

// Without an entry every function is a kernel. The multiply feeding the add is
// one FMA but two FLOPs; the load of %c does not move with %i: LLVM hoists it,
// and the exp with it (1 + 256 FLOPs, 256 x 2 + 1 accesses of 4 bytes).
// CHECK-LABEL: func.func @axpy
// CHECK-SAME:  tc.model_flops = 512 : i64, tc.model_bytes = 3072 : i64
// CHECK-LABEL: func.func @hoisted
// CHECK-SAME:  tc.model_flops = 257 : i64, tc.model_bytes = 2052 : i64
func.func @axpy(%X: memref<256xf32>, %Y: memref<256xf32>) {
  %a = arith.constant 3.0 : f32
  loop.for %i = 0 to 256 {
    %x = memref.load %X[%i] : memref<256xf32>
    %y = memref.load %Y[%i] : memref<256xf32>
    %m = arith.mulf %a, %x : f32
    %s = arith.addf %m, %y : f32
    memref.store %s, %Y[%i] : memref<256xf32>
  }
  func.return
}
func.func @hoisted(%A: memref<256xf32>, %c: memref<1xf32>) {
  %z = arith.constant 0 : index
  loop.for %i = 0 to 256 {
    %x = memref.load %c[%z] : memref<1xf32>
    %e = math.exp %x : f32
    %a = memref.load %A[%i] : memref<256xf32>
    %s = arith.addf %a, %e : f32
    memref.store %s, %A[%i] : memref<256xf32>
  }
  func.return
}

// -----

// An op the model has no rule for is reported, and the kernel gets no time
// (not the time of the rest, as if the call cost nothing).
// CHECK-LABEL: func.func @calls
// CHECK-NOT:   tc.predicted_s
// CHECK-SAME:  tc.unknown = "no cost rule for func.call"
func.func @calls(%A: memref<4xf32>) {
  loop.for %i = 0 to 4 {
    func.call @other(%A) : (memref<4xf32>) -> ()
  }
  func.return
}
func.func private @other(memref<4xf32>)
