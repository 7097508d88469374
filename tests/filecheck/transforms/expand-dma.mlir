// RUN: tilecraft-opt %s --split-input-file -p expand-dma | filecheck %s
// Round trip of the op's syntax:
// RUN: tilecraft-opt %s --split-input-file | tilecraft-opt --split-input-file | filecheck %s --check-prefix=SYNTAX

// A padded load: 1 x 8 elements of 16, the first and last zero.
func.func @load(%A: memref<6x16xi8>) {
  %P = loop.alloc "pad" inp_buffer : memref<8x16xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  loop.dma %A[%c0, %c0] -> %P[%c0, %c0] size(%c1, %c6) pad(%c0, %c0, %c1, %c1) stride 8 tile 1 x 8 elem 16 : memref<6x16xi8> -> memref<8x16xi8>
  func.return
}

// SYNTAX-LABEL: func.func @load(
// SYNTAX:         loop.dma %{{.*}}[%[[Z:.*]], %[[Z]]] -> %{{.*}}[%[[Z]], %[[Z]]] size(%{{.*}}, %{{.*}}) pad(%[[Z]], %[[Z]], %[[ONE:.*]], %[[ONE]]) stride 8 tile 1 x 8 elem 16 : memref<6x16xi8> -> memref<8x16xi8>

// Rows, columns and the scalars of an element; the padding's frame decides
// between the global element and 0.
// CHECK-LABEL: func.func @load(
// CHECK-SAME:      %[[A:.*]]: memref<6x16xi8>) {
// CHECK:         %[[P:.*]] = loop.alloc "pad" inp_buffer : memref<8x16xi8>
// CHECK-NOT:     loop.dma
// CHECK:         loop.for %[[R:.*]] = 0 to 1 {
// CHECK-NEXT:      loop.for %[[C:.*]] = 0 to 8 {
// CHECK-NEXT:        loop.for %[[E:.*]] = 0 to 16 {
// CHECK:               %[[IN:.*]] = arith.andi
// CHECK-NOT:           memref.load
// CHECK:               %[[V:.*]] = scf.if %{{.*}} -> (i8) {
// CHECK:                 %[[L:.*]] = memref.load %[[A]]
// CHECK-NEXT:            scf.yield %[[L]] : i8
// CHECK-NEXT:          } else {
// CHECK-NEXT:            %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-NEXT:            scf.yield %[[ZERO]] : i8
// CHECK-NEXT:          }
// CHECK:               memref.store %[[V]], %[[P]]

// -----

// A narrowing store: only `size` rows and columns are written.
func.func @store(%C: memref<8x32xi8>) {
  %acc = loop.alloc "C.acc" acc_buffer : memref<2x32xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.dma %acc[%c0, %c0] -> %C[%c4, %c0] size(%c1, %c4) pad(%c0, %c0, %c0, %c0) stride 4 tile 1 x 4 elem 16 : memref<2x32xi32> -> memref<8x32xi8>
  func.return
}

// CHECK-LABEL: func.func @store(
// CHECK:         loop.for %{{.*}} = 0 to 1 {
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 4 {
// CHECK-NEXT:        loop.for %{{.*}} = 0 to 16 {
// CHECK:               loop.guard %{{.*}} {
// CHECK:                 %[[V:.*]] = memref.load %{{.*}} : memref<2x32xi32>
// CHECK-NEXT:            %[[N:.*]] = arith.trunci %[[V]] : i32 to i8
// CHECK:                 memref.store %[[N]], %{{.*}} : memref<8x32xi8>
