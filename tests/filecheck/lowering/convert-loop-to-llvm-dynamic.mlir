// RUN: tilecraft-opt %s -p loop-to-llvm | filecheck %s
// RUN: tilecraft-opt %s | tilecraft-opt | filecheck %s --check-prefix=ROUND

// A loop to a bound known when the program runs (here read from a buffer): the
// loop is tested before its first iteration (it may run none) and at its end.
// The parallel kind is kept in the IR; until a launch takes a run-time range,
// loop-outline-parallel leaves it and it runs on the calling thread.
func.func @fill(%A: memref<64xf32>, %S: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %s = memref.load %S[%c0] : memref<1xi64>
  %n = arith.index_cast %s : i64 to index
  loop.for %i = 0 to %n parallel {
    %z = arith.constant 2.0 : f32
    memref.store %z, %A[%i] : memref<64xf32>
  }
  func.return
}

// ROUND:      loop.for %i = 0 to %n parallel {

// CHECK:      llvm.func @fill(
// CHECK:        %[[S:.*]] = llvm.load %S
// CHECK-NEXT:   %[[ENTER:.*]] = llvm.icmp "slt" %c0, %[[S]] : i64
// CHECK-NEXT:   llvm.cond_br %[[ENTER]], ^[[BODY:.*]](%c0 : i64), ^[[EXIT:.*]]
// CHECK-NEXT: ^[[BODY]](%i: i64):
// CHECK:        llvm.store
// CHECK:        %[[NEXT:.*]] = llvm.add %i, %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:   %[[MORE:.*]] = llvm.icmp "slt" %[[NEXT]], %[[S]] : i64
// CHECK-NEXT:   llvm.cond_br %[[MORE]], ^[[BODY]](%[[NEXT]] : i64), ^[[EXIT]]
// CHECK-NOT:  loop.launch
