// RUN: tilecraft-opt %s --split-input-file -p loop-partition | filecheck %s

// Guards the pass cannot bound are left exactly as they are: a condition on a
// loaded value, an index through a division, an unsigned comparison, a guard
// that varies only across a vectorized loop (the vectorizer masks its lanes),
// and one that never holds on a whole iteration of its loop.

func.func @loaded(%A: memref<8xindex>, %B: memref<8xf32>, %x: f32) {
  %c4 = arith.constant 4 : index
  loop.for %i = 0 to 8 {
    %n = memref.load %A[%i] : memref<8xindex>
    %ok = arith.cmpi slt, %n, %c4 : index
    loop.guard %ok {
      memref.store %x, %B[%i] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @loaded(
// CHECK:         loop.for %{{.*}} = 0 to 8 {
// CHECK:           loop.guard
// CHECK-NOT:     loop.for

// -----

func.func @divided(%B: memref<8xf32>, %x: f32) {
  %c3 = arith.constant 3 : index
  %c2 = arith.constant 2 : index
  loop.for %i = 0 to 8 {
    %q = arith.divui %i, %c3 : index
    %ok = arith.cmpi slt, %q, %c2 : index
    loop.guard %ok {
      memref.store %x, %B[%i] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @divided(
// CHECK:         loop.for %{{.*}} = 0 to 8 {
// CHECK:           loop.guard
// CHECK-NOT:     loop.for

// -----

func.func @unsigned(%B: memref<8xf32>, %x: f32) {
  %c5 = arith.constant 5 : index
  loop.for %i = 0 to 8 {
    %ok = arith.cmpi ult, %i, %c5 : index
    loop.guard %ok {
      memref.store %x, %B[%i] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @unsigned(
// CHECK:         loop.for %{{.*}} = 0 to 8 {
// CHECK:           loop.guard
// CHECK-NOT:     loop.for

// -----

func.func @lanes(%B: memref<8xf32>, %x: f32) {
  %c5 = arith.constant 5 : index
  loop.for %i = 0 to 8 vectorized {
    %ok = arith.cmpi slt, %i, %c5 : index
    loop.guard %ok {
      memref.store %x, %B[%i] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @lanes(
// CHECK:         loop.for %{{.*}} = 0 to 8 vectorized {
// CHECK:           loop.guard
// CHECK-NOT:     loop.for

// -----

// i * 4 + u < 2 fails for u = 3 on every i: no iteration is whole.
func.func @never(%B: memref<16xf32>, %x: f32) {
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  loop.for %i = 0 to 4 {
    %base = arith.muli %i, %c4 : index
    loop.for %u = 0 to 4 {
      %j = arith.addi %base, %u : index
      %ok = arith.cmpi slt, %j, %c2 : index
      loop.guard %ok {
        memref.store %x, %B[%j] : memref<16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @never(
// CHECK:         loop.for %{{.*}} = 0 to 4 {
// CHECK:           loop.for %{{.*}} = 0 to 4 {
// CHECK:             loop.guard
// CHECK-NOT:     loop.for
