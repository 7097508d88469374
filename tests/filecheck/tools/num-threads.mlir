// The thread count of parallel loops: --num-threads, else OMP_NUM_THREADS, else
// the CPUs this process may run on. Ahead-of-time code's pool starts threads
// 1..N-1 (the caller is thread 0); a launch's chunk count (8 per thread it may
// use) is computed at run time from its cap (test_parallel_runtime.py).
// RUN: tilecraft-translate %s --no-opt --num-threads 3 | filecheck %s --check-prefix=THREE
// RUN: env OMP_NUM_THREADS=5 tilecraft-translate %s --no-opt | filecheck %s --check-prefix=FIVE
// RUN: env OMP_NUM_THREADS=5 tilecraft-translate %s --no-opt --num-threads 2 | filecheck %s --check-prefix=TWO
// RUN: not tilecraft-translate %s --num-threads -3 2>&1 | filecheck %s --check-prefix=BAD
// RUN: env OMP_NUM_THREADS=many not tilecraft-translate %s 2>&1 | filecheck %s --check-prefix=BADENV
// RUN: tilecraft-run %s --entry scale --num-threads 1 | filecheck %s --check-prefix=OUT
// RUN: not tilecraft-run %s --entry scale --num-threads 0 2>&1 | filecheck %s --check-prefix=OUTBAD

// THREE-LABEL: define internal void @tilecraft_pool_start()
// THREE-COUNT-2: call i32 @pthread_create(
// THREE-NOT: @pthread_create(
// THREE: ret void
// FIVE-LABEL: define internal void @tilecraft_pool_start()
// FIVE-COUNT-4: call i32 @pthread_create(
// FIVE-NOT: @pthread_create(
// FIVE: ret void
// TWO-LABEL: define internal void @tilecraft_pool_start()
// TWO-COUNT-1: call i32 @pthread_create(
// TWO-NOT: @pthread_create(
// TWO: ret void
// BAD: tilecraft-translate: error: argument --num-threads: expected a positive integer, got '-3'
// BADENV: tilecraft-translate: error: OMP_NUM_THREADS='many' is not a positive integer
// OUT: B: (1024,) float32
// OUTBAD: tilecraft-run: error: --num-threads must be a positive integer, got 0

// The loop is too small to pay for a second thread (loop-outline-parallel would
// cap it at 1 and call it inline): its cap says every thread, so the pool runs.
func.func @scale(%A: memref<1024xf32> {tc.name = "A"}, %B: memref<1024xf32> {tc.name = "B"}) {
  loop.for %i = 0 to 1024 parallel {
    %a = memref.load %A[%i] : memref<1024xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %B[%i] : memref<1024xf32>
  } {tc.max_threads = 64}
  func.return
}
