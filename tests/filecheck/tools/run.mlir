// tilecraft-run: compile a te function with LLVM, run it on arrays, check it
// against the numpy reference evaluator.

// Random inputs (from --seed), compared with the reference.
// RUN: tilecraft-run %s --entry add --seed 3 --check | filecheck %s --check-prefix=CHECK-RANDOM
// CHECK-RANDOM: C: (100,) float32 [
// CHECK-RANDOM: check: OK (C: max abs err {{.*}})

// Inputs from .npy files; the output printed, then saved.
// RUN: python -c "import numpy as np; np.save('%t.a.npy', np.arange(100, dtype=np.float32))"
// RUN: python -c "import numpy as np; np.save('%t.b.npy', np.full(100, 0.5, dtype=np.float32))"
// RUN: tilecraft-run %s --entry add --input %t.a.npy --input %t.b.npy | filecheck %s --check-prefix=CHECK-PRINT
// CHECK-PRINT: C: (100,) float32 [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5] ... (100 values)
// RUN: tilecraft-run %s --entry add --input %t.a.npy --input %t.b.npy --output %t.c.npy --check
// RUN: python -c "import numpy as np; c = np.load('%t.c.npy'); print(c.dtype, c.shape, c[99])" | filecheck %s --check-prefix=CHECK-SAVED
// CHECK-SAVED: float32 (100,) 99.5

// Two reductions, a rank-2 input, a second function in the same file.
// RUN: tilecraft-run %s --entry rowmax --seed 1 --check | filecheck %s --check-prefix=CHECK-ROWMAX
// CHECK-ROWMAX: M: (16,) float32
// CHECK-ROWMAX: check: OK

// User errors: one line naming what is wrong, exit code 1, no traceback.
// RUN: not tilecraft-run %s --entry nope 2>&1 | filecheck %s --check-prefix=CHECK-ENTRY
// CHECK-ENTRY: tilecraft-run: error: no function @nope in the file (its functions: @add, @rowmax)
// CHECK-ENTRY-NOT: Traceback

// RUN: not tilecraft-run %s --entry add --input %t.a.npy 2>&1 | filecheck %s --check-prefix=CHECK-COUNT
// CHECK-COUNT: tilecraft-run: error: @add takes 2 inputs (A, B), got 1 --input files

// RUN: not tilecraft-run %s --entry rowmax --input %t.a.npy 2>&1 | filecheck %s --check-prefix=CHECK-SHAPE
// CHECK-SHAPE: tilecraft-run: error: input file '{{.*}}.a.npy' for argument 'X' holds a (100,) float32 array; 'X' is (16, 32) float32

// RUN: python -c "import numpy as np; np.save('%t.i.npy', np.arange(100, dtype=np.int32))"
// RUN: not tilecraft-run %s --entry add --input %t.i.npy --input %t.b.npy 2>&1 | filecheck %s --check-prefix=CHECK-DTYPE
// CHECK-DTYPE: tilecraft-run: error: input file '{{.*}}.i.npy' for argument 'A' holds a (100,) int32 array; 'A' is (100,) float32

// RUN: not tilecraft-run %s --entry add --input %s --input %t.b.npy 2>&1 | filecheck %s --check-prefix=CHECK-UNREADABLE
// CHECK-UNREADABLE: tilecraft-run: error: cannot read input file '{{.*}}run.mlir' for argument 'A':
// CHECK-UNREADABLE-NOT: Traceback

// RUN: not tilecraft-run %s --entry add --input %t.missing.npy --input %t.b.npy 2>&1 | filecheck %s --check-prefix=CHECK-MISSING
// CHECK-MISSING: tilecraft-run: error: cannot read input file '{{.*}}missing.npy' for argument 'A':

// RUN: not tilecraft-run %S/Inputs/verify-error.mlir --entry f 2>&1 | filecheck %s --check-prefix=CHECK-VERIFY
// CHECK-VERIFY: verify-error.mlir:4:5: error: 'te.reduce' op: te.reduce axis 'k' has an empty range [4, 0).

// RUN: not tilecraft-run %S/Inputs/loops.mlir --entry copy --check 2>&1 | filecheck %s --check-prefix=CHECK-LOOPS
// CHECK-LOOPS: tilecraft-run: error: --check needs a te function; @copy is loop-level IR

// A loop-level function: the buffers given with --input are its inputs.
// RUN: tilecraft-run %S/Inputs/loops.mlir --entry copy --input %t.a.npy | filecheck %s --check-prefix=CHECK-COPY
// CHECK-COPY: Out: (100,) float32 [0., 1., 2., 3., 4., 5., 6., 7.] ... (100 values)
// Every buffer it only reads is an input: one missing is an error, never a zeroed output.
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.arange(4, dtype=np.float32))"
// RUN: not tilecraft-run %S/Inputs/loops.mlir --entry fma --input %t.x.npy 2>&1 | filecheck %s --check-prefix=CHECK-FMA-MISSING
// CHECK-FMA-MISSING: tilecraft-run: error: @fma takes 2 inputs (X, Y), got 1 --input files: missing Y
// CHECK-FMA-MISSING-NOT: Acc:
// An accumulator given with --input is updated and shown: Acc = X * X + X.
// RUN: tilecraft-run %S/Inputs/loops.mlir --entry fma --input %t.x.npy --input %t.x.npy --input %t.x.npy | filecheck %s --check-prefix=CHECK-FMA
// CHECK-FMA: Acc: (4,) float32 [ 0.,  2.,  6., 12.]

func.func @add(%A: tensor<100xf32>, %B: tensor<100xf32>) -> tensor<100xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<100xf32> {
    %a = te.read %A[%i] : tensor<100xf32>
    %b = te.read %B[%i] : tensor<100xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<100xf32>
    %i = sched.axis %s "i"
    %io, %ii = sched.split %i by 16
    sched.parallel %io
    sched.vectorize %ii
  }
  func.return %C : tensor<100xf32>
}

func.func @rowmax(%X: tensor<16x32xf32>) -> tensor<16xf32> {
  %M = te.compute "M" (%i: "i") -> tensor<16xf32> {
    %m = te.reduce max (%k: "k" = 0 to 32) -> f32 {
      %x = te.read %X[%i, %k] : tensor<16x32xf32>
      te.yield %x : f32
    }
    te.yield %m : f32
  }
  func.return %M : tensor<16xf32>
}
