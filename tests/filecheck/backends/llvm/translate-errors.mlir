// RUN: not tilecraft-translate %s 2>&1 | filecheck %s
// RUN: not tilecraft-translate %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not tilecraft-translate %s --emit=shared-lib 2>&1 | filecheck %s --check-prefix=NOOUT

// Errors are one line naming the place and what to change, with exit code 1.

func.func @f(%A: memref<4xf32>) {
  loop.for %i = 0 to 4 {
    %a = memref.load %A[%i] : memref<4xf32>
    // CHECK: translate-errors.mlir:[[# @LINE + 1]]:5: error: convert-loop-to-llvm: 'math.cbrt' is not supported; lower it to loop, memref, scf.if, arith or math ops first.
    %b = math.cbrt %a : f32
    memref.store %b, %A[%i] : memref<4xf32>
  }
  func.return
}
// CHECK-NOT: Traceback

// MISSING: tilecraft-translate: error: cannot read '{{.*}}translate-errors.mlir.missing': no such file
// NOOUT: tilecraft-translate: error: --emit=shared-lib needs an output file (-o)
