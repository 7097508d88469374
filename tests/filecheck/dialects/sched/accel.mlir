// The accelerator's schedule primitives: memory scopes of its buffers, a stage
// kept in a scope (set_scope), virtual threads. Printed, parsed again, printed
// identically; then lowered to loops.
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// RUN: %generic-roundtrip
// RUN: tilecraft-opt %s -p convert-te-to-loop | filecheck %s --check-prefix=LOOP

func.func @gemv(%A: tensor<4x16xi8>, %W: tensor<4x4x16xi8>) -> tensor<4x4xi32> {
  %P = te.compute "P" (%i: "i", %k: "k") -> tensor<4x16xi8> {
    %a = te.read %A[%i, %k] : tensor<4x16xi8>
    te.yield %a : i8
  }
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<4x4xi32> {
    %s = te.reduce sum (%k: "k" = 0 to 16) -> i32 {
      %a = te.read %P[%i, %k] : tensor<4x16xi8>
      %w = te.read %W[%i, %j, %k] : tensor<4x4x16xi8>
      %a32 = arith.extsi %a : i8 to i32
      %w32 = arith.extsi %w : i8 to i32
      %m = arith.muli %a32, %w32 : i32
      te.yield %m : i32
    }
    te.yield %s : i32
  }
  sched.schedule {
    %p = sched.stage %P : tensor<4x16xi8>
    %w = sched.stage %W : tensor<4x4x16xi8>
    %c = sched.stage %C : tensor<4x4xi32>
    sched.set_scope %p inp_buffer
    %ww = sched.cache_read %w wgt_buffer for %c
    %cc = sched.cache_write %c acc_buffer
    %i = sched.axis %c "i"
    sched.vthread %i
    sched.compute_at %cc, %i
    sched.compute_at %p, %i
    sched.compute_at %ww, %i
  }
  func.return %C : tensor<4x4xi32>
}

// CHECK:       sched.set_scope %{{.*}} inp_buffer
// CHECK-NEXT:  %{{.*}} = sched.cache_read %{{.*}} wgt_buffer for %{{.*}}
// CHECK-NEXT:  %{{.*}} = sched.cache_write %{{.*}} acc_buffer
// CHECK-NEXT:  %[[I:.*]] = sched.axis %{{.*}} "i"
// CHECK-NEXT:  sched.vthread %[[I]]

// The vthread axis is a loop of kind vthread; the buffers inside it are in
// their scopes.
// LOOP-LABEL: func.func @gemv(
// LOOP:         loop.for %[[I:.*]] = 0 to 4 vthread {
// LOOP-DAG:       %{{.*}} = loop.alloc "C.acc_buffer" acc_buffer : memref<1x4xi32>
// LOOP-DAG:       %{{.*}} = loop.alloc "P" inp_buffer : memref<1x16xi8>
// LOOP-DAG:       %{{.*}} = loop.alloc "W.wgt_buffer" wgt_buffer : memref<1x4x16xi8>
