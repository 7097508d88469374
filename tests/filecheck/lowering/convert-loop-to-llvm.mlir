// RUN: tilecraft-opt %s --split-input-file -p loop-vectorize,convert-loop-to-llvm | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'loop-vectorize,convert-loop-to-llvm{reassociate=false}' | filecheck %s --check-prefix=STRICT
// Vectorized loops are written as vector IR by loop-vectorize first (its own
// tests check that IR); the checks here are on what the conversion makes of it.

// A serial loop is a bottom-tested counted loop; memory is addressed with GEPs
// from argument pointers that promise noalias, alignment and their size.

func.func @serial(%A: memref<8xf32>, %B: memref<8xf32>) {
  loop.for %i = 0 to 8 {
    %a = memref.load %A[%i] : memref<8xf32>
    %b = arith.addf %a, %a : f32
    memref.store %b, %B[%i] : memref<8xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @serial(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 4 : i64, llvm.dereferenceable = 32 : i64}
// CHECK-SAME:    %[[B:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 4 : i64, llvm.dereferenceable = 32 : i64}
// CHECK-SAME:    attributes {no_unwind}
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[EIGHT:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    llvm.br ^[[ENTRY:.*]]
// CHECK-NEXT:  ^[[ENTRY]]:
// CHECK-NEXT:    llvm.br ^[[BODY:.*]](%[[ZERO]] : i64)
// CHECK-NEXT:  ^[[BODY]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[VA:.*]] = llvm.load %[[PA]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[SUM:.*]] = llvm.fadd %[[VA]], %[[VA]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NEXT:    %[[PB:.*]] = llvm.getelementptr inbounds %[[B]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %[[SUM]], %[[PB]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[I]], %[[ONE]] overflow<nsw> : i64
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %[[NEXT]], %[[EIGHT]] : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY]](%[[NEXT]] : i64), ^[[EXIT:.*]]
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    llvm.return

// Without reassociation only `contract` (FMA formation) remains.
// STRICT-LABEL: llvm.func @serial(
// STRICT:         llvm.fadd {{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32

// -----

// An unrolled loop is a counted loop too, its back edge marked for LLVM to
// unroll it fully (the copies are made and folded before O3,
// backends/llvm/target.py).
func.func @unrolled(%A: memref<4xf32>) {
  %x = arith.constant 1.0 : f32
  loop.for %i = 0 to 4 unrolled {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  loop.for %i = 0 to 4 {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @unrolled(
// CHECK:         llvm.cond_br %{{.*}}, ^{{.*}}(%{{.*}} : i64), ^{{.*}} {llvmx.unroll_full}
// CHECK:         llvm.cond_br %{{.*}}, ^{{.*}}(%{{.*}} : i64), ^{{[^ ]*}}{{$}}

// -----

// Constant indices (what loop-unroll leaves of an unrolled loop) fold into
// constant GEP offsets (row-major: A[2, i] is element 6 + i).

func.func @unrolled(%A: memref<4x3xf32>) {
  %c = arith.constant 2 : index
  %i0 = arith.constant 0 : index
  %a0 = memref.load %A[%c, %i0] : memref<4x3xf32>
  memref.store %a0, %A[%i0, %c] : memref<4x3xf32>
  %i1 = arith.constant 1 : index
  %a1 = memref.load %A[%c, %i1] : memref<4x3xf32>
  memref.store %a1, %A[%i1, %c] : memref<4x3xf32>
  %i2 = arith.constant 2 : index
  %a2 = memref.load %A[%c, %i2] : memref<4x3xf32>
  memref.store %a2, %A[%i2, %c] : memref<4x3xf32>
  func.return
}

// CHECK-LABEL: llvm.func @unrolled(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK:         llvm.br ^[[ENTRY:.*]]
// CHECK-NEXT:  ^[[ENTRY]]:
// CHECK-NEXT:    %[[P0:.*]] = llvm.getelementptr inbounds %[[A]][6] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[V0:.*]] = llvm.load %[[P0]]
// CHECK-NEXT:    %[[Q0:.*]] = llvm.getelementptr inbounds %[[A]][2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %[[V0]], %[[Q0]]
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr inbounds %[[A]][7]
// CHECK-NEXT:    %[[V1:.*]] = llvm.load %[[P1]]
// CHECK-NEXT:    %[[Q1:.*]] = llvm.getelementptr inbounds %[[A]][5]
// CHECK-NEXT:    llvm.store %[[V1]], %[[Q1]]
// CHECK-NEXT:    %[[P2:.*]] = llvm.getelementptr inbounds %[[A]][8]
// CHECK-NEXT:    %[[V2:.*]] = llvm.load %[[P2]]
// The third store goes where the third load came from: the address is reused.
// CHECK-NEXT:    llvm.store %[[V2]], %[[P2]]
// CHECK-NEXT:    llvm.return

// -----

// A vectorized loop of extent 16 is one <16 x f32> vector: contiguous loads and
// stores, vector arithmetic with `contract` so LLVM may form FMAs.

func.func @vectorized(%A: memref<4x16xf32>, %B: memref<4x16xf32>) {
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to 16 vectorized {
      %a = memref.load %A[%i, %j] : memref<4x16xf32>
      %b = memref.load %B[%i, %j] : memref<4x16xf32>
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %m, %b : f32
      memref.store %s, %B[%i, %j] : memref<4x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: llvm.func @vectorized(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {{.*}}, %[[B:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[SIXTEEN:.*]] = llvm.mlir.constant(16) : i64
// CHECK:       ^[[BODY:.*]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %[[I]], %[[SIXTEEN]] overflow<nsw> : i64
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][%[[ROW]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[VA:.*]] = llvm.load %[[PA]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT:    %[[PB:.*]] = llvm.getelementptr inbounds %[[B]][%[[ROW]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[VB:.*]] = llvm.load %[[PB]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT:    %[[M:.*]] = llvm.fmul %[[VA]], %[[VB]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : vector<16xf32>
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[M]], %[[VB]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : vector<16xf32>
// CHECK-NEXT:    llvm.store %[[S]], %[[PB]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT:    llvm.add %[[I]]

// -----

// Longer than 4 registers' worth (32 x f64): a loop over full vectors, then a
// 4-lane vector for the tail.

func.func @strip_mined(%A: memref<100xf64>) {
  loop.for %j = 0 to 100 vectorized {
    %a = memref.load %A[%j] : memref<100xf64>
    %n = arith.negf %a : f64
    memref.store %n, %A[%j] : memref<100xf64>
  }
  func.return
}

// CHECK-LABEL: llvm.func @strip_mined(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[WIDTH:.*]] = llvm.mlir.constant(32) : i64
// CHECK-DAG:     %[[VECTORS:.*]] = llvm.mlir.constant(3) : i64
// CHECK:       ^[[BODY:.*]](%[[V:.*]]: i64):
// CHECK-NEXT:    %[[J:.*]] = llvm.mul %[[V]], %[[WIDTH]] : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[J]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[P]] {alignment = 8 : i64} : !llvm.ptr -> vector<32xf64>
// CHECK-NEXT:    %[[N:.*]] = llvm.fneg %[[X]] {{.*}} : vector<32xf64>
// CHECK-NEXT:    llvm.store %[[N]], %[[P]] {alignment = 8 : i64} : vector<32xf64>, !llvm.ptr
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[V]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %[[NEXT]], %[[VECTORS]] : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY]](%[[NEXT]] : i64), ^[[TAIL:.*]]
// CHECK-NEXT:  ^[[TAIL]]:
// CHECK-NEXT:    %[[PT:.*]] = llvm.getelementptr inbounds %[[A]][96] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK-NEXT:    %[[VT:.*]] = llvm.load %[[PT]] {alignment = 8 : i64} : !llvm.ptr -> vector<4xf64>
// CHECK-NEXT:    %[[NT:.*]] = llvm.fneg %[[VT]] {{.*}} : vector<4xf64>
// CHECK-NEXT:    llvm.store %[[NT]], %[[PT]] {alignment = 8 : i64} : vector<4xf64>, !llvm.ptr
// CHECK-NEXT:    llvm.return

// -----

// A uniform guard branches; a lane-varying one masks the lanes: the access
// under it becomes a masked load/store. i1 buffers hold bytes (numpy bools).

func.func @guards(%A: memref<20xf32>, %U: memref<1xi1>) {
  %c0 = arith.constant 0 : index
  %u = memref.load %U[%c0] : memref<1xi1>
  loop.for %j = 0 to 8 vectorized {
    %c5 = arith.constant 5 : index
    %in = arith.cmpi slt, %j, %c5 : index
    loop.guard %u {
      loop.guard %in {
        %a = memref.load %A[%j] : memref<20xf32>
        memref.store %a, %A[%j] : memref<20xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: llvm.func @guards(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {{.*}}, %[[U:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[LANES:.*]] = llvm.mlir.constant(dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi64>) : vector<8xi64>
// CHECK-DAG:     %[[FIVE:.*]] = llvm.mlir.constant(dense<5> : vector<8xi64>) : vector<8xi64>
// CHECK-DAG:     %[[ZEROS:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<8xf32>) : vector<8xf32>
// CHECK:         %[[BYTE:.*]] = llvm.load %[[U]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK-NEXT:    %[[FLAG:.*]] = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK-NEXT:    %[[MASK:.*]] = llvm.icmp "slt" %[[LANES]], %[[FIVE]] : vector<8xi64>
// CHECK-NEXT:    llvm.cond_br %[[FLAG]], ^[[THEN:.*]], ^[[AFTER:.*]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    %[[V:.*]] = llvmx.masked_load %[[A]], %[[MASK]], %[[ZEROS]] {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    llvmx.masked_store %[[V]], %[[A]], %[[MASK]] {alignment = 4 : i32} : vector<8xf32>, !llvm.ptr, vector<8xi1>
// CHECK-NEXT:    llvm.br ^[[AFTER]]
// CHECK-NEXT:  ^[[AFTER]]:
// CHECK-NEXT:    llvm.return

// -----

// Lanes that do not read consecutive elements gather and scatter: the per-lane
// offsets are the uniform part splatted plus lane * stride (8 here).

func.func @gather_scatter(%A: memref<8x8xf32>, %B: memref<8x8xf32>) {
  loop.for %i = 0 to 8 {
    loop.for %j = 0 to 8 vectorized {
      %a = memref.load %A[%j, %i] : memref<8x8xf32>
      memref.store %a, %B[%j, %i] : memref<8x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: llvm.func @gather_scatter(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {{.*}}, %[[B:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[ALL:.*]] = llvm.mlir.constant(dense<true> : vector<8xi1>) : vector<8xi1>
// CHECK-DAG:     %[[PASS:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<8xf32>) : vector<8xf32>
// CHECK-DAG:     %[[STRIDES:.*]] = llvm.mlir.constant(dense<[0, 8, 16, 24, 32, 40, 48, 56]> : vector<8xi64>) : vector<8xi64>
// CHECK:       ^[[BODY:.*]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[ONE:.*]] = llvm.insertelement %[[I]], %{{.*}}[%{{.*}} : i32] : vector<8xi64>
// CHECK-NEXT:    %[[SPLAT:.*]] = llvm.shufflevector %[[ONE]], %[[ONE]] [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xi64>
// CHECK-NEXT:    %[[OFFSETS:.*]] = llvm.add %[[SPLAT]], %[[STRIDES]] : vector<8xi64>
// CHECK-NEXT:    %[[V:.*]] = llvmx.masked_gather %[[A]][%[[OFFSETS]]], %[[ALL]], %[[PASS]] {alignment = 4 : i32, elem_type = f32}
// CHECK-NEXT:    llvmx.masked_scatter %[[V]], %[[B]][%[[OFFSETS]]], %[[ALL]] {alignment = 4 : i32, elem_type = f32}

// -----

// scf.if on a lane-varying condition selects between both sides; on a uniform
// one it branches, and the merge block receives the (vector) result.

func.func @if_results(%A: memref<4xf32>, %C: memref<1xi1>) {
  %c0 = arith.constant 0 : index
  %u = memref.load %C[%c0] : memref<1xi1>
  loop.for %j = 0 to 4 vectorized {
    %a = memref.load %A[%j] : memref<4xf32>
    %z = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %a, %z : f32
    %r = scf.if %pos -> (f32) {
      scf.yield %a : f32
    } else {
      scf.yield %z : f32
    }
    %s = scf.if %u -> (f32) {
      scf.yield %r : f32
    } else {
      scf.yield %z : f32
    }
    memref.store %s, %A[%j] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @if_results(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[ZEROS:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<4xf32>) : vector<4xf32>
// CHECK:         %[[FLAG:.*]] = llvm.trunc
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[A]] {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT:    %[[POS:.*]] = llvmx.fcmp "ogt" %[[V]], %[[ZEROS]] : vector<4xf32> -> vector<4xi1>
// CHECK-NEXT:    %[[R:.*]] = llvmx.select %[[POS]], %[[V]], %[[ZEROS]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    llvm.cond_br %[[FLAG]], ^[[THEN:.*]], ^[[ELSE:.*]]
// CHECK-NEXT:  ^[[THEN]]:
// CHECK-NEXT:    llvm.br ^[[MERGE:.*]](%[[R]] : vector<4xf32>)
// CHECK-NEXT:  ^[[ELSE]]:
// CHECK-NEXT:    llvm.br ^[[MERGE]](%[[ZEROS]] : vector<4xf32>)
// CHECK-NEXT:  ^[[MERGE]](%[[S:.*]]: vector<4xf32>):
// CHECK-NEXT:    llvm.store %[[S]], %[[A]] {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr

// -----

// "local" buffers are 64-byte aligned allocas in the entry block; "global"
// ones come from aligned_alloc (size rounded up to 64) and are freed at the end
// of their block.

func.func @buffers(%A: memref<16xf32>) {
  %L = loop.alloc "L" local : memref<4x4xf32>
  %G = loop.alloc "G" global : memref<100xf32>
  %c1 = arith.constant 1 : index
  %a = memref.load %A[%c1] : memref<16xf32>
  memref.store %a, %L[%c1, %c1] : memref<4x4xf32>
  memref.store %a, %G[%c1] : memref<100xf32>
  func.return
}

// CHECK-LABEL: llvm.func @buffers(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[L:.*]] = llvm.alloca %[[ONE]] x !llvm.array<16 x f32> {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(448) : i64
// CHECK-NEXT:    llvm.br ^[[ENTRY:.*]]
// CHECK-NEXT:  ^[[ENTRY]]:
// CHECK-NEXT:    %[[G:.*]] = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][1]
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[PA]]
// CHECK-NEXT:    %[[PL:.*]] = llvm.getelementptr inbounds %[[L]][5]
// CHECK-NEXT:    llvm.store %[[V]], %[[PL]]
// CHECK-NEXT:    %[[PG:.*]] = llvm.getelementptr inbounds %[[G]][1]
// CHECK-NEXT:    llvm.store %[[V]], %[[PG]]
// CHECK-NEXT:    llvm.call @free(%[[G]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-NEXT:  llvm.func @free(!llvm.ptr)

// -----

// A launch (what loop-outline-parallel makes of a parallel loop): the caller
// stores the arguments into a context struct and calls the runtime with a task
// that unpacks them and computes its chunk's share; the outlined body is
// internal, takes its buffers noalias and runs its chunk (maybe empty). The
// launch's thread cap is the runtime's third argument.

func.func @parallel(%A: memref<64xf32>) {
  loop.launch @parallel_parallel0(%A) 0 to 64 {tc.max_threads = 3 : i64} : memref<64xf32>
  func.return
}
func.func private @parallel_parallel0(%A: memref<64xf32>, %begin: index, %end: index) {
  %two = arith.constant 2.0 : f32
  %c1 = arith.constant 1 : index
  scf.for %i = %begin to %end step %c1 {
    %a = memref.load %A[%i] : memref<64xf32>
    %m = arith.mulf %a, %two : f32
    memref.store %m, %A[%i] : memref<64xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @parallel(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK:         %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr)> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[CAP:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK:         %[[FIELD:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(!llvm.ptr)>
// CHECK-NEXT:    llvm.store %[[A]], %[[FIELD]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[TASK:.*]] = llvm.mlir.addressof @parallel_parallel0_task : !llvm.ptr
// CHECK-NEXT:    llvm.call @tilecraft_parallel_launch(%[[TASK]], %[[CTX]], %[[CAP]]) : (!llvm.ptr, !llvm.ptr, i32) -> ()
// CHECK-NEXT:    llvm.return

// CHECK-LABEL: llvm.func internal @parallel_parallel0_task(
// CHECK-SAME:    %[[CTXP:[0-9a-zA-Z_]+]]: !llvm.ptr, %[[THREAD:[0-9a-zA-Z_]+]]: i32, %[[THREADS:[0-9a-zA-Z_]+]]: i32)
// CHECK-DAG:     %[[N:.*]] = llvm.mlir.constant(64) : i64
// CHECK:         %[[F:.*]] = llvm.getelementptr %[[CTXP]][0, 0]
// CHECK-NEXT:    %[[PTR:.*]] = llvm.load %[[F]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[T:.*]] = llvm.zext %[[THREAD]] : i32 to i64
// CHECK-NEXT:    %[[TS:.*]] = llvm.zext %[[THREADS]] : i32 to i64
// CHECK-NEXT:    %[[T1:.*]] = llvm.add %[[T]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:    %[[M0:.*]] = llvm.mul %[[T]], %[[N]] overflow<nsw> : i64
// CHECK-NEXT:    %[[B0:.*]] = llvm.udiv %[[M0]], %[[TS]] : i64
// CHECK-NEXT:    %[[M1:.*]] = llvm.mul %[[T1]], %[[N]] overflow<nsw> : i64
// CHECK-NEXT:    %[[B1:.*]] = llvm.udiv %[[M1]], %[[TS]] : i64
// CHECK-NEXT:    llvm.call @parallel_parallel0(%[[PTR]], %[[B0]], %[[B1]])

// CHECK-LABEL: llvm.func internal @parallel_parallel0(
// CHECK-SAME:    %[[BA:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 4 : i64, llvm.dereferenceable = 256 : i64}, %[[BEGIN:[0-9a-zA-Z_]+]]: i64, %[[END:[0-9a-zA-Z_]+]]: i64)
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
// CHECK:         %[[ANY:.*]] = llvm.icmp "slt" %[[BEGIN]], %[[END]] : i64
// CHECK-NEXT:    llvm.cond_br %[[ANY]], ^[[BODY:.*]](%[[BEGIN]] : i64), ^[[EXIT:.*]]
// CHECK-NEXT:  ^[[BODY]](%[[I:.*]]: i64):
// CHECK:         llvm.fmul %{{.*}}, %[[TWO]]
// CHECK:         llvm.icmp "slt" %{{.*}}, %[[END]] : i64
// CHECK:       llvm.func @tilecraft_parallel_launch(!llvm.ptr, !llvm.ptr, i32)

// -----

// A launch capped at one thread calls its body on the whole range from the
// caller: no task, no runtime (the module declares no launch).

func.func @one_thread(%A: memref<64xf32>, %X: memref<f32>) {
  %x = memref.load %X[] : memref<f32>
  loop.launch @one_thread_parallel0(%A, %x) 3 to 64 {tc.max_threads = 1 : i64} : memref<64xf32>, f32
  func.return
}
func.func private @one_thread_parallel0(%A: memref<64xf32>, %x: f32, %begin: index, %end: index) {
  %c1 = arith.constant 1 : index
  scf.for %i = %begin to %end step %c1 {
    memref.store %x, %A[%i] : memref<64xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @one_thread(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK-DAG:     %[[LB:.*]] = llvm.mlir.constant(3) : i64
// CHECK-DAG:     %[[UB:.*]] = llvm.mlir.constant(64) : i64
// CHECK:         %[[X:.*]] = llvm.load
// CHECK-NEXT:    llvm.call @one_thread_parallel0(%[[A]], %[[X]], %[[LB]], %[[UB]]) : (!llvm.ptr, f32, i64, i64) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   _task
// CHECK-NOT:   tilecraft_parallel_launch

// -----

// Every lane would store to S[0] (a reduction): the vectorized loop is written
// as a serial one instead.

func.func @reduction_falls_back(%A: memref<32xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  loop.for %k = 0 to 32 vectorized {
    %s = memref.load %S[%c0] : memref<1xf32>
    %a = memref.load %A[%k] : memref<32xf32>
    %t = arith.addf %s, %a : f32
    memref.store %t, %S[%c0] : memref<1xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @reduction_falls_back(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {{.*}}, %[[S:[0-9a-zA-Z_]+]]: !llvm.ptr
// CHECK:       ^[[BODY:.*]](%[[K:.*]]: i64):
// CHECK-NEXT:    %[[VS:.*]] = llvm.load %[[S]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][%[[K]]]
// CHECK-NEXT:    %[[VA:.*]] = llvm.load %[[PA]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[T:.*]] = llvm.fadd %[[VS]], %[[VA]] {{.*}} : f32
// CHECK-NEXT:    llvm.store %[[T]], %[[S]] {alignment = 4 : i64} : f32, !llvm.ptr

// -----

// Integer ops: maxsi is an intrinsic call, floordivsi is sdiv corrected toward
// minus infinity, fptosi (absent from xDSL's llvm dialect) is llvmx. A divisor
// that is not a constant is replaced by 1 where it is 0 or where MIN / -1 would
// overflow (both trap on x86), and a quotient by 0 is then made 0 (numpy's rule).

func.func @int_ops(%A: memref<4xi32>, %B: memref<4xi32>) {
  loop.for %i = 0 to 4 vectorized {
    %a = memref.load %A[%i] : memref<4xi32>
    %b = memref.load %B[%i] : memref<4xi32>
    %m = arith.maxsi %a, %b : i32
    %f = arith.floordivsi %m, %b : i32
    %x = arith.sitofp %f : i32 to f32
    %y = arith.fptosi %x : f32 to i32
    memref.store %y, %B[%i] : memref<4xi32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @int_ops(
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(dense<0> : vector<4xi32>) : vector<4xi32>
// CHECK-DAG:     %[[MIN:.*]] = llvm.mlir.constant(dense<-2147483648> : vector<4xi32>) : vector<4xi32>
// CHECK-DAG:     %[[MINUS1:.*]] = llvm.mlir.constant(dense<-1> : vector<4xi32>) : vector<4xi32>
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(dense<1> : vector<4xi32>) : vector<4xi32>
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} -> vector<4xi32>
// CHECK-NEXT:    %[[B:.*]] = llvm.load %{{.*}} -> vector<4xi32>
// CHECK-NEXT:    %[[M:.*]] = llvm.call_intrinsic "llvm.smax.v4i32"(%[[A]], %[[B]]) : (vector<4xi32>, vector<4xi32>) -> vector<4xi32>
// CHECK-NEXT:    %[[BY0:.*]] = llvm.icmp "eq" %[[B]], %[[ZERO]] : vector<4xi32>
// CHECK-NEXT:    %[[ISMIN:.*]] = llvm.icmp "eq" %[[M]], %[[MIN]] : vector<4xi32>
// CHECK-NEXT:    %[[ISM1:.*]] = llvm.icmp "eq" %[[B]], %[[MINUS1]] : vector<4xi32>
// CHECK-NEXT:    %[[OVF:.*]] = llvm.and %[[ISMIN]], %[[ISM1]] : vector<4xi1>
// CHECK-NEXT:    %[[BAD:.*]] = llvm.or %[[BY0]], %[[OVF]] : vector<4xi1>
// CHECK-NEXT:    %[[D:.*]] = llvmx.select %[[BAD]], %[[ONE]], %[[B]] : vector<4xi1>, vector<4xi32>
// CHECK-NEXT:    %[[Q:.*]] = llvm.sdiv %[[M]], %[[D]] : vector<4xi32>
// CHECK-NEXT:    %[[R:.*]] = llvm.srem %[[M]], %[[D]] : vector<4xi32>
// CHECK-NEXT:    %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %[[ZERO]] : vector<4xi32>
// CHECK-NEXT:    %[[SIGNS:.*]] = llvm.xor %[[R]], %[[D]] : vector<4xi32>
// CHECK-NEXT:    %[[NEG:.*]] = llvm.icmp "slt" %[[SIGNS]], %[[ZERO]] : vector<4xi32>
// CHECK-NEXT:    %[[ADJUST:.*]] = llvm.and %[[INEXACT]], %[[NEG]] : vector<4xi1>
// CHECK-NEXT:    %[[QM1:.*]] = llvm.sub %[[Q]], %[[ONE]] : vector<4xi32>
// CHECK-NEXT:    %[[FQ:.*]] = llvmx.select %[[ADJUST]], %[[QM1]], %[[Q]] : vector<4xi1>, vector<4xi32>
// CHECK-NEXT:    %[[F:.*]] = llvmx.select %[[BY0]], %[[ZERO]], %[[FQ]] : vector<4xi1>, vector<4xi32>
// CHECK-NEXT:    %[[X:.*]] = llvm.sitofp %[[F]] : vector<4xi32> to vector<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = llvmx.fptosi %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK-NEXT:    llvm.store %[[Y]]

// -----

// Math: LLVM intrinsics where xDSL has them, llvm.call_intrinsic otherwise,
// rsqrt as 1/sqrt, and f64 erf from libm.

func.func @math_ops(%A: memref<2xf64>) {
  loop.for %i = 0 to 2 {
    %a = memref.load %A[%i] : memref<2xf64>
    %e = math.exp %a : f64
    %t = math.tanh %e : f64
    %r = math.rsqrt %t : f64
    %q = math.fma %r, %a, %e : f64
    %erf = math.erf %q : f64
    memref.store %erf, %A[%i] : memref<2xf64>
  }
  func.return
}

// CHECK-LABEL: llvm.func @math_ops(
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} -> f64
// CHECK-NEXT:    %[[E:.*]] = llvm.intr.exp(%[[A]]) : (f64) -> f64
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tanh.f64"(%[[E]]) : (f64) -> f64
// CHECK-NEXT:    %[[S:.*]] = llvm.intr.sqrt(%[[T]]) : (f64) -> f64
// CHECK-NEXT:    %[[R:.*]] = llvm.fdiv %[[ONE]], %[[S]] {{.*}} : f64
// CHECK-NEXT:    %[[Q:.*]] = llvm.intr.fma(%[[R]], %[[A]], %[[E]]) : (f64, f64, f64) -> f64
// CHECK-NEXT:    %[[ERF:.*]] = llvm.call @erf(%[[Q]]) : (f64) -> f64
// CHECK-NEXT:    llvm.store %[[ERF]]
// CHECK:       llvm.func @erf(f64) -> f64

// -----

// f32 exp is a polynomial on vectors (LLVM would call expf once per lane):
// n = floor(x log2e + 1/2), r = x - n ln2 in two steps, and 2^n put together
// in the exponent bits (in two halves).

func.func @exp_f32(%A: memref<16xf32>) {
  loop.for %i = 0 to 16 vectorized {
    %a = memref.load %A[%i] : memref<16xf32>
    %e = math.exp %a : f32
    memref.store %e, %A[%i] : memref<16xf32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @exp_f32(
// CHECK-DAG:     %[[LOG2E:.*]] = llvm.mlir.constant(dense<1.44269502> : vector<16xf32>) : vector<16xf32>
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} -> vector<16xf32>
// CHECK:         %[[XL:.*]] = llvm.fmul %{{.*}}, %[[LOG2E]] {fastmathFlags = #llvm.fastmath<contract>} : vector<16xf32>
// CHECK:         %[[N:.*]] = llvm.intr.floor(%{{.*}}) : (vector<16xf32>) -> vector<16xf32>
// CHECK:         %[[NI:.*]] = llvmx.fptosi %[[N]] : vector<16xf32> to vector<16xi32>
// CHECK:         llvm.shl %{{.*}} : vector<16xi32>
// CHECK:         llvm.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK:         %[[NAN:.*]] = llvmx.fcmp "uno" %[[X]], %[[X]] : vector<16xf32> -> vector<16xi1>
// CHECK-NEXT:    %[[E:.*]] = llvmx.select %[[NAN]], %[[X]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NEXT:    llvm.store %[[E]]

// -----

// A model's graph function: a view is the arena pointer plus its byte offset, a
// call passes the pointers on, the arena is freed when the function returns.
// Weight arguments keep their `tc.weight` name for whoever binds them.

func.func @graph(%x: memref<4xf32>, %w: memref<4xf32> {tc.weight = "w"}, %y: memref<4xf32> {tc.name = "y"}) {
  %arena = loop.alloc "arena" global : memref<64xi8>
  %t = loop.view %arena[32] : memref<64xi8> to memref<4xf32>
  func.call @kernel(%x, %w, %t) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.call @kernel(%t, %w, %y) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func @kernel(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  func.return
}

// CHECK-LABEL: llvm.func @graph(
// CHECK-SAME:    %[[X:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias{{[^}]*}}},
// CHECK-SAME:    %[[W:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias{{[^}]*}}, tc.weight = "w"},
// CHECK-SAME:    %[[Y:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias{{[^}]*}}, tc.name = "y"})
// CHECK:         %[[ARENA:.*]] = llvm.call @aligned_alloc(%{{.*}}, %{{.*}}) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:    %[[T:.*]] = llvm.getelementptr inbounds %[[ARENA]][32] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.call @kernel(%[[X]], %[[W]], %[[T]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @kernel(%[[T]], %[[W]], %[[Y]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @free(%[[ARENA]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func @kernel(

// -----

// A constant divisor other than 0 and -1 cannot trap: plain srem. A remainder by
// a variable divisor only needs the divisor made safe (a remainder by 1 is 0).

func.func @remainders(%A: memref<8xi32>, %B: memref<8xi32>) {
  %c7 = arith.constant 7 : i32
  loop.for %i = 0 to 8 {
    %a = memref.load %A[%i] : memref<8xi32>
    %b = memref.load %B[%i] : memref<8xi32>
    %r = arith.remsi %a, %c7 : i32
    %s = arith.remsi %r, %b : i32
    memref.store %s, %B[%i] : memref<8xi32>
  }
  func.return
}

// CHECK-LABEL: llvm.func @remainders(
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} -> i32
// CHECK:         %[[B:.*]] = llvm.load %{{.*}} -> i32
// CHECK-NEXT:    %[[R:.*]] = llvm.srem %[[A]], %{{.*}} : i32
// CHECK-NEXT:    %[[BY0:.*]] = llvm.icmp "eq" %[[B]], %{{.*}} : i32
// CHECK:         %[[D:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[B]] : i1, i32
// CHECK-NEXT:    %[[S:.*]] = llvm.srem %[[R]], %[[D]] : i32
// CHECK-NEXT:    llvm.store %[[S]]

// -----

// loop.assert: a branch around a store of the message's code (1, 2, ... in the
// order met) into the global error word, which the caller reads after the call;
// the messages follow in one NUL-separated constant.

func.func @checks(%A: memref<8xi32>) {
  %c4 = arith.constant 4 : i32
  loop.for %i = 0 to 8 {
    %a = memref.load %A[%i] : memref<8xi32>
    %ok = arith.cmpi slt, %a, %c4 : i32
    loop.assert %ok, "too big"
    %c0 = arith.constant 0 : i32
    %pos = arith.cmpi sge, %a, %c0 : i32
    loop.assert %pos, "negative"
  }
  func.return
}

// CHECK-LABEL: llvm.func @checks(
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG:     %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         %[[OK:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    llvm.cond_br %[[OK]], ^[[GO:.*]], ^[[FAIL:.*]]
// CHECK-NEXT:  ^[[FAIL]]:
// CHECK-NEXT:    %[[W:.*]] = llvm.mlir.addressof @__tilecraft_error : !llvm.ptr
// CHECK-NEXT:    llvm.store %[[ONE]], %[[W]] : i32, !llvm.ptr
// CHECK-NEXT:    llvm.br ^[[GO]]
// CHECK-NEXT:  ^[[GO]]:
// CHECK:         llvm.store %[[TWO]], %{{.*}} : i32, !llvm.ptr
// CHECK:       llvm.mlir.global external @__tilecraft_error(0 : i32) {{.*}} : i32
// CHECK-NEXT:  llvm.mlir.global external constant @__tilecraft_error_messages("too big\00negative\00") {{.*}} : !llvm.array<17 x i8>

// -----

// Narrow storage types: LLVM has no bf16 or float8 here, so they are held as the
// integer of their width (the bitcast to it is no instruction); a 4-bit value is a
// byte in memory (the low bits), truncated when loaded and zero-extended when
// stored, like i1. Vectorized loads and stores keep those types per lane.

func.func @narrow(%A: memref<16xbf16>, %B: memref<16xi16>, %C: memref<16xi4>, %D: memref<16xi8>) {
  loop.for %i = 0 to 16 vectorized {
    %a = memref.load %A[%i] : memref<16xbf16>
    %b = arith.bitcast %a : bf16 to i16
    memref.store %b, %B[%i] : memref<16xi16>
    %c = memref.load %C[%i] : memref<16xi4>
    %d = arith.extsi %c : i4 to i8
    %e = arith.trunci %d : i8 to i4
    memref.store %e, %C[%i] : memref<16xi4>
    memref.store %d, %D[%i] : memref<16xi8>
  }
  func.return
}

// CHECK-LABEL: llvm.func @narrow(
// CHECK-SAME:    %[[A:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 2 : i64, llvm.dereferenceable = 32 : i64}
// CHECK-SAME:    %[[B:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 2 : i64, llvm.dereferenceable = 32 : i64}
// CHECK-SAME:    %[[C:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 1 : i64, llvm.dereferenceable = 16 : i64}
// CHECK-SAME:    %[[D:[0-9a-zA-Z_]+]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 1 : i64, llvm.dereferenceable = 16 : i64}
// CHECK:         %[[BITS:.*]] = llvm.load %[[A]] {alignment = 2 : i64} : !llvm.ptr -> vector<16xi16>
// CHECK-NEXT:    llvm.store %[[BITS]], %[[B]] {alignment = 2 : i64} : vector<16xi16>, !llvm.ptr
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.load %[[C]] {alignment = 1 : i64} : !llvm.ptr -> vector<16xi8>
// CHECK-NEXT:    %[[NIBBLES:.*]] = llvm.trunc %[[BYTES]] : vector<16xi8> to vector<16xi4>
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.sext %[[NIBBLES]] : vector<16xi4> to vector<16xi8>
// CHECK-NEXT:    %[[BACK:.*]] = llvm.trunc %[[WIDE]] : vector<16xi8> to vector<16xi4>
// CHECK-NEXT:    %[[STORED:.*]] = llvm.zext %[[BACK]] : vector<16xi4> to vector<16xi8>
// CHECK-NEXT:    llvm.store %[[STORED]], %[[C]] {alignment = 1 : i64} : vector<16xi8>, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[WIDE]], %[[D]] {alignment = 1 : i64} : vector<16xi8>, !llvm.ptr

// -----

// A narrow float constant is its bits: bf16 1.0 is 0x3F80, float8_e4m3fn -2.0 is 0xC0.

func.func @narrow_constants(%A: memref<2xbf16>, %B: memref<2xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : bf16
  memref.store %one, %A[%c0] : memref<2xbf16>
  %two = arith.constant -2.0 : f8E4M3FN
  memref.store %two, %B[%c0] : memref<2xf8E4M3FN>
  func.return
}

// CHECK-LABEL: llvm.func @narrow_constants(
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(16256 : i16) : i16
// CHECK-DAG:     %[[TWO:.*]] = llvm.mlir.constant(-64 : i8) : i8
// CHECK:         llvm.store %[[ONE]], %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr
// CHECK:         llvm.store %[[TWO]], %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
