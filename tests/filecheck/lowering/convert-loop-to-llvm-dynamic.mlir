// RUN: tilecraft-opt %s -p loop-to-llvm | filecheck %s
// RUN: tilecraft-opt %s | tilecraft-opt | filecheck %s --check-prefix=ROUND
// RUN: tilecraft-translate %s --no-opt | filecheck %s --check-prefix=LL

// A loop to a bound known when the program runs (here read from a buffer): the
// loop is tested before its first iteration (it may run none) and at its end.
func.func @fill(%A: memref<64xf32>, %S: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %s = memref.load %S[%c0] : memref<1xi64>
  %n = arith.index_cast %s : i64 to index
  loop.for %i = 0 to %n {
    %z = arith.constant 2.0 : f32
    memref.store %z, %A[%i] : memref<64xf32>
  }
  func.return
}

// ROUND:      loop.for %i = 0 to %n {

// CHECK:      llvm.func @fill(
// CHECK:        %[[S:.*]] = llvm.load %S
// CHECK-NEXT:   %[[ENTER:.*]] = llvm.icmp "slt" %c0, %[[S]] : i64
// CHECK-NEXT:   llvm.cond_br %[[ENTER]], ^[[BODY:.*]](%c0 : i64), ^[[EXIT:.*]]
// CHECK-NEXT: ^[[BODY]](%i: i64):
// CHECK:        llvm.store
// CHECK:        %[[NEXT:.*]] = llvm.add %i, %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:   %[[MORE:.*]] = llvm.icmp "slt" %[[NEXT]], %[[S]] : i64
// CHECK-NEXT:   llvm.cond_br %[[MORE]], ^[[BODY]](%[[NEXT]] : i64), ^[[EXIT]] {llvmx.no_runtime_unroll}

// Its trip count known only when it runs, LLVM is not to unroll it by a factor
// (remainder loops: compile time, no speed); loops of a static extent keep
// LLVM's choice.
// LL:      define void @fill(
// LL:        br i1 %{{.*}}, label %{{.*}}, label %{{.*}}, !llvm.loop ![[ID:[0-9]+]]
// LL:      ![[ID]] = distinct !{![[ID]], ![[REQ:[0-9]+]]}
// LL-NEXT: ![[REQ]] = !{!"llvm.loop.unroll.runtime.disable"}

// A parallel one is launched when its extent is positive, on as many threads
// as `extent` iterations of its work pay for (`tc.iteration_cost`, written by
// loop-outline-parallel); the extent travels in the launch's context.
func.func @fill_parallel(%A: memref<64xf32>, %S: memref<1xi64>) {
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

// CHECK:      llvm.func @fill_parallel(
// CHECK:        %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr, i64)>
// CHECK:        %[[S:.*]] = llvm.load %S
// CHECK-NEXT:   %[[ANY:.*]] = llvm.icmp "slt" %c0{{.*}}, %[[S]] : i64
// CHECK-NEXT:   llvm.cond_br %[[ANY]], ^[[LAUNCH:.*]], ^[[DONE:.*]]
// CHECK-NEXT: ^[[LAUNCH]]:
// CHECK-NEXT:   llvm.sitofp %[[S]] : i64 to f64
// CHECK:        llvm.intr.sqrt
// CHECK:        %[[THREADS:.*]] = llvm.trunc %{{.*}} : i64 to i32
// CHECK:        llvm.store %[[S]], %{{.*}} : i64, !llvm.ptr
// CHECK:        llvm.call @tilecraft_parallel_launch(%{{.*}}, %[[CTX]], %[[THREADS]])
// CHECK-NEXT:   llvm.br ^[[DONE]]
// CHECK:      llvm.func internal @fill_parallel_parallel0_task(
// CHECK:        %[[EXTENT:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:        llvm.mul %{{.*}}, %[[EXTENT]] overflow<nsw> : i64
