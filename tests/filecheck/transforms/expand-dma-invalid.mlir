// RUN: tilecraft-opt %s --split-input-file -p expand-dma --verify-diagnostics 2>&1 | filecheck %s

// What `loop.dma` refuses (its verifier, run before expand-dma).

// CHECK: loop.dma copies global -> inp_buffer/wgt_buffer/acc_buffer or acc_buffer -> global, not global -> global.
func.func @global_to_global(%A: memref<16xi8>, %B: memref<16xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.dma %A[%c0] -> %B[%c0] size(%c1, %c1) pad(%c0, %c0, %c0, %c0) stride 1 tile 1 x 1 elem 16 : memref<16xi8> -> memref<16xi8>
  func.return
}

// -----

// CHECK: loop.dma copies i8 to i32; only a store may narrow integers.
func.func @widen(%A: memref<16xi8>) {
  %B = loop.alloc "B" acc_buffer : memref<16xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.dma %A[%c0] -> %B[%c0] size(%c1, %c1) pad(%c0, %c0, %c0, %c0) stride 1 tile 1 x 1 elem 16 : memref<16xi8> -> memref<16xi32>
  func.return
}

// -----

// CHECK: loop.dma tile of 2 x 1 elements of 16 does not fit its memref<16xi8> buffer.
func.func @too_big(%A: memref<64xi8>) {
  %B = loop.alloc "B" inp_buffer : memref<16xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.dma %A[%c0] -> %B[%c0] size(%c2, %c1) pad(%c0, %c0, %c0, %c0) stride 1 tile 2 x 1 elem 16 : memref<64xi8> -> memref<16xi8>
  func.return
}

// -----

// CHECK: loop.dma stores have no padding (a pad is not 0).
func.func @store_pad(%C: memref<64xi32>) {
  %acc = loop.alloc "C.acc" acc_buffer : memref<32xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.dma %acc[%c0] -> %C[%c0] size(%c1, %c1) pad(%c1, %c0, %c0, %c0) stride 1 tile 2 x 1 elem 16 : memref<32xi32> -> memref<64xi32>
  func.return
}

// -----

// CHECK: loop.dma source memref<16xi8> takes 1 indices, not 2.
func.func @indices(%A: memref<16xi8>) {
  %B = loop.alloc "B" inp_buffer : memref<16xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.dma %A[%c0, %c0] -> %B[%c0] size(%c1, %c1) pad(%c0, %c0, %c0, %c0) stride 1 tile 1 x 1 elem 16 : memref<16xi8> -> memref<16xi8>
  func.return
}
