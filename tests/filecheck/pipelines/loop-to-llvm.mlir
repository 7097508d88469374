// The pipeline is its passes in order, nothing else:
// RUN: tilecraft-opt %s -p loop-to-llvm -o %t.pipeline.mlir
// RUN: tilecraft-opt %s -p "expand-dma,loop-partition,loop-unroll{trivial-only=true},loop-outline-parallel,loop-vectorize,convert-loop-to-llvm" -o %t.passes.mlir
// RUN: diff %t.pipeline.mlir %t.passes.mlir
// RUN: filecheck %s --input-file %t.pipeline.mlir
// Each stage is visible on its own:
// RUN: tilecraft-opt %s -p "loop-unroll{trivial-only=true},loop-outline-parallel,loop-vectorize" | filecheck %s --check-prefix=VECTOR-IR

// Rows in parallel, two rows of a block unrolled, columns vectorized. (The loop
// carries a thread cap: on its work alone it would run on one thread, a call.)
func.func @scale(%A: memref<8x16xf32>, %B: memref<8x16xf32>) {
  loop.for %io = 0 to 4 parallel {
    loop.for %ii = 0 to 2 unrolled {
      loop.for %j = 0 to 16 vectorized {
        %c2 = arith.constant 2 : index
        %t = arith.muli %io, %c2 : index
        %i = arith.addi %t, %ii : index
        %a = memref.load %A[%i, %j] : memref<8x16xf32>
        %b = arith.addf %a, %a : f32
        memref.store %b, %B[%i, %j] : memref<8x16xf32>
      }
    }
  } {tc.max_threads = 4}
  func.return
}

// VECTOR-IR-LABEL: func.func @scale(
// VECTOR-IR-NEXT:    loop.launch @scale_parallel0(%{{.*}}, %{{.*}}) 0 to 4 {tc.max_threads = 4 : i64} : memref<8x16xf32>, memref<8x16xf32>
// VECTOR-IR-LABEL: func.func private @scale_parallel0(
// VECTOR-IR:         scf.for
// VECTOR-IR:           loop.for %{{.*}} = 0 to 2 unrolled {
// VECTOR-IR:             vector.load {{.*}} : memref<8x16xf32>, vector<16xf32>
// VECTOR-IR-NOT:         vector.load

// The kernel launches the task; the task calls the outlined body on its chunk;
// the body runs its rows with a 16-lane load and store each, the two rows a
// loop that LLVM unrolls.
// CHECK-LABEL: llvm.func @scale(
// CHECK:         llvm.call @tilecraft_parallel_launch
// CHECK-LABEL: llvm.func internal @scale_parallel0_task(
// CHECK:         llvm.call @scale_parallel0(
// CHECK-LABEL: llvm.func internal @scale_parallel0(
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK:         llvm.cond_br {{.*}} {llvmx.unroll_full}
// CHECK-NOT:     loop.
// CHECK-NOT:     vector.
