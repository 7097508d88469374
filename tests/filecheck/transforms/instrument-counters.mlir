// RUN: tilecraft-opt %s -p instrument-counters | filecheck %s

// Every block gets a counter (the function's entry 0, then its blocks in
// pre-order); vectorized and parallel loops become serial; a call passes the
// counters on; the module names each counter.
func.func @scale(%A: memref<10xf32> {tc.name = "A"}, %B: memref<10xf32> {tc.name = "B"}) {
  loop.for %io = 0 to 3 parallel {
    loop.for %ii = 0 to 4 vectorized {
      %c4 = arith.constant 4 : index
      %t = arith.muli %io, %c4 : index
      %i = arith.addi %t, %ii : index
      %c10 = arith.constant 10 : index
      %ok = arith.cmpi slt, %i, %c10 : index
      loop.guard %ok {
        %a = memref.load %A[%i] : memref<10xf32>
        %b = arith.mulf %a, %a : f32
        memref.store %b, %B[%i] : memref<10xf32>
      }
    }
  }
  func.return
}

func.func @main(%A: memref<10xf32>, %B: memref<10xf32>) {
  func.call @scale(%A, %B) : (memref<10xf32>, memref<10xf32>) -> ()
  loop.for %r = 0 to 2 unrolled {
    %z = arith.constant 0.0 : f32
    memref.store %z, %A[%r] : memref<10xf32>
  }
  func.return
}

// CHECK:      builtin.module attributes {tc.counters = ["@scale: entry", "@scale: loop %io", "@scale: loop %ii", "@scale: guard %ok", "@main: entry", "@main: loop %r"]} {
// CHECK-NEXT:   func.func @scale(%A: memref<10xf32> {tc.name = "A"}, %B: memref<10xf32> {tc.name = "B"}, %tc_counters: memref<6xi64> {tc.name = "tc_counters"}) {
// CHECK-NEXT:     %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:     %[[N0:.*]] = memref.load %tc_counters[%[[K0]]] : memref<6xi64>
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[S0:.*]] = arith.addi %[[N0]], %[[ONE]] : i64
// CHECK-NEXT:     memref.store %[[S0]], %tc_counters[%[[K0]]] : memref<6xi64>
// CHECK-NEXT:     loop.for %io = 0 to 3 {
// CHECK-NEXT:       %[[K1:.*]] = arith.constant 1 : index
// CHECK:            loop.for %ii = 0 to 4 {
// CHECK-NEXT:         %[[K2:.*]] = arith.constant 2 : index
// CHECK:              loop.guard %ok {
// CHECK-NEXT:           %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT:           %{{.*}} = memref.load %tc_counters[%[[K3]]] : memref<6xi64>
// CHECK:                %a = memref.load %A[%i] : memref<10xf32>
// CHECK:        func.func @main(%A: memref<10xf32>, %B: memref<10xf32>, %tc_counters: memref<6xi64>) {
// CHECK-NEXT:     %[[K4:.*]] = arith.constant 4 : index
// CHECK:          func.call @scale(%A, %B, %tc_counters) : (memref<10xf32>, memref<10xf32>, memref<6xi64>) -> ()
// An unrolled loop stays unrolled (each copy then counts once).
// CHECK-NEXT:     loop.for %r = 0 to 2 unrolled {
// CHECK-NEXT:       %[[K5:.*]] = arith.constant 5 : index
