// The loop dialect's accelerator pieces: buffers in the accelerator's scopes,
// virtual thread loops, loop.dma. Printed, parsed again, printed identically.
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// RUN: %generic-roundtrip

func.func @tiles(%A: memref<6x4x16xi8>, %W: memref<4x4x16x16xi8>, %C: memref<6x4x16xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %t = 0 to 2 vthread {
    %in = loop.alloc "A.inp" inp_buffer : memref<5x4x16xi8>
    %wt = loop.alloc "W.wgt" wgt_buffer : memref<4x16x16xi8>
    %acc = loop.alloc "C.acc" acc_buffer : memref<3x4x16xi32>
    loop.dma %A[%c0, %c0, %c0] -> %in[%c0, %c0, %c0] size(%c4, %c4) pad(%c1, %c0, %c0, %c0) stride 4 tile 5 x 4 elem 16 : memref<6x4x16xi8> -> memref<5x4x16xi8>
    loop.dma %W[%t, %c0, %c0, %c0] -> %wt[%c0, %c0, %c0] size(%c1, %c4) pad(%c0, %c0, %c0, %c0) stride 4 tile 1 x 4 elem 256 : memref<4x4x16x16xi8> -> memref<4x16x16xi8>
    loop.dma %acc[%c0, %c0, %c0] -> %C[%c0, %c0, %c0] size(%c1, %c4) pad(%c0, %c0, %c0, %c0) stride 4 tile 1 x 4 elem 16 : memref<3x4x16xi32> -> memref<6x4x16xi8>
  }
  func.return
}

// CHECK-LABEL: func.func @tiles(
// CHECK:         loop.for %[[T:.*]] = 0 to 2 vthread {
// CHECK-NEXT:      %[[IN:.*]] = loop.alloc "A.inp" inp_buffer : memref<5x4x16xi8>
// CHECK-NEXT:      %[[WT:.*]] = loop.alloc "W.wgt" wgt_buffer : memref<4x16x16xi8>
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc "C.acc" acc_buffer : memref<3x4x16xi32>
// CHECK-NEXT:      loop.dma %{{.*}} -> %[[IN]][{{.*}}] size({{.*}}) pad({{.*}}) stride 4 tile 5 x 4 elem 16 : memref<6x4x16xi8> -> memref<5x4x16xi8>
// CHECK-NEXT:      loop.dma %{{.*}}[%[[T]], {{.*}}] -> %[[WT]]
// CHECK-NEXT:      loop.dma %[[ACC]]{{.*}} : memref<3x4x16xi32> -> memref<6x4x16xi8>
