// RUN: tilecraft-opt %s --split-input-file -p lower-accel-tokens --verify-diagnostics 2>&1 | filecheck %s
// Without the verifier the pass finds the same errors itself.
// RUN: tilecraft-opt %s --split-input-file -p lower-accel-tokens --disable-verify --verify-diagnostics 2>&1 | filecheck %s --check-prefix=PASS

// No queue joins the load and store modules.
accel.program @p {
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  // CHECK: lower-accel-tokens-invalid.mlir:[[# @LINE + 2]]:3: error: 'accel.store' op: waits on the accel.load at {{.*}}lower-accel-tokens-invalid.mlir:[[# @LINE - 1]]:3: the load and store modules share no token queue
  // PASS: lower-accel-tokens-invalid.mlir:[[# @LINE + 1]]:3: error: lower-accel-tokens: 'accel.store' op: waits on the accel.load at {{.*}}lower-accel-tokens-invalid.mlir:[[# @LINE - 2]]:3: the load and store modules share no token queue
  %1 = accel.store out sram(0) dram(0) size(1, 1) stride(1) after %0
}

// -----

// A consumer before its producer: stream order cannot honour the dependence.
accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: lower-accel-tokens-invalid.mlir:[[# @LINE + 2]]:3: error: 'accel.gemm' op: waits on the accel.load at {{.*}}lower-accel-tokens-invalid.mlir:[[# @LINE + 3]]:3, which comes later in the stream; the order of this dependence cannot be kept
  // PASS: lower-accel-tokens-invalid.mlir:[[# @LINE + 1]]:3: error: lower-accel-tokens: 'accel.gemm' op: waits on the accel.load at {{.*}}lower-accel-tokens-invalid.mlir:[[# @LINE + 2]]:3, which comes later in the stream
  %0 = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %1
  %1 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
}
