// RUN: tilecraft-opt %s --split-input-file -p infer-alignment | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'infer-alignment{argument-alignment=4}' | filecheck %s --check-prefix=ARG4

// A thread's 4 floats: row stride 128, column 4 * %t: 16 bytes from a 16-byte
// aligned argument (with arguments only 4-byte aligned, nothing is proved).
// CHECK-LABEL: func.func @four_per_thread
// CHECK:       vector.load %A[%r, %{{.*}}] {alignment = 16 : i64}
// CHECK:       vector.store %{{.*}}, %S[%r, %{{.*}}] {alignment = 16 : i64}
// ARG4-LABEL:  func.func @four_per_thread
// ARG4:        vector.load %A[%r, %{{.*}}] : memref<8x128xf32>
// The shared buffer's own alignment (16) does not depend on the arguments'.
// ARG4:        vector.store %{{.*}}, %S[%r, %{{.*}}] {alignment = 16 : i64}
func.func @four_per_thread(%A: memref<8x128xf32>, %r: index, %t: index) {
  %c4 = arith.constant 4 : index
  %o = arith.muli %t, %c4 : index
  %v = vector.load %A[%r, %o] : memref<8x128xf32>, vector<4xf32>
  %S = loop.alloc "S" shared : memref<8x128xf32>
  vector.store %v, %S[%r, %o] : memref<8x128xf32>, vector<4xf32>
  func.return
}

// -----

// Sums, differences and remainders keep the smaller divisor: 8 * %t + 2 is
// only even (8 bytes); shifts multiply it (%t << 3: 32 bytes, capped at the
// argument's 16).
// CHECK-LABEL: func.func @sums
// CHECK:       memref.load %A[%[[EVEN:.*]]] {alignment = 8 : i64}
// CHECK:       memref.load %A[%[[SHIFTED:.*]]] {alignment = 16 : i64}
// CHECK:       memref.load %A[%{{.*}}] {alignment = 16 : i64}
func.func @sums(%A: memref<1024xf32>, %t: index) -> f32 {
  %c8 = arith.constant 8 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %m = arith.muli %t, %c8 : index
  %even = arith.addi %m, %c2 : index
  %a = memref.load %A[%even] : memref<1024xf32>
  %shifted = arith.shli %t, %c3 : index
  %b = memref.load %A[%shifted] : memref<1024xf32>
  %rem = arith.remsi %shifted, %c8 : index
  %c = memref.load %A[%rem] : memref<1024xf32>
  %s = arith.addf %a, %b : f32
  %u = arith.addf %s, %c : f32
  func.return %u : f32
}

// -----

// Not proved, so left alone: an odd offset, a loop variable (step 1), an
// index known only at run time, a row of 130 floats (only 8 bytes: written,
// as it is more than the element's 4), a buffer with a '?' dimension.
// CHECK-LABEL: func.func @unproved
// CHECK:       vector.load %A[%{{.*}}] : memref<1024xf32>, vector<4xf32>
// CHECK:       loop.for
// CHECK-NEXT:    memref.load %A[%i] : memref<1024xf32>
// CHECK:       memref.load %A[%t] : memref<1024xf32>
// CHECK:       vector.load %R[%t, %{{.*}}] {alignment = 8 : i64} : memref<4x130xf32>
// CHECK:       vector.load %D[%{{.*}}] : memref<?xf32>
func.func @unproved(%A: memref<1024xf32>, %R: memref<4x130xf32>, %D: memref<?xf32>, %t: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %o = arith.muli %t, %c4 : index
  %odd = arith.addi %o, %c1 : index
  %v = vector.load %A[%odd] : memref<1024xf32>, vector<4xf32>
  loop.for %i = 0 to 8 {
    %s = memref.load %A[%i] : memref<1024xf32>
  }
  %w = memref.load %A[%t] : memref<1024xf32>
  %x = vector.load %R[%t, %o] : memref<4x130xf32>, vector<4xf32>
  %y = vector.load %D[%o] : memref<?xf32>, vector<4xf32>
  func.return
}
