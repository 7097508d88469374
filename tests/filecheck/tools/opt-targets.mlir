// tilecraft-opt speaks tilecraft: -t writes tilecraft's targets (tools/targets.py),
// -v prints tilecraft's version, --help lists tilecraft's passes and targets and
// keeps xDSL's apart.

// LLVM IR of a te function (lowered to loops first), after LLVM's O3 or before it.
// RUN: tilecraft-opt %S/Inputs/good.mlir -t llvm | filecheck %s --check-prefix=LLVM
// LLVM: target triple =
// LLVM: define void @add(ptr noalias
// LLVM-NOT: alloca
// RUN: tilecraft-opt %S/Inputs/good.mlir -t 'llvm{optimize=false}' | filecheck %s --check-prefix=NOOPT
// NOOPT: define void @add(
// Before O3 the loop is still a loop: a branch back to its header.
// NOOPT: br i1

// Host assembly, after the passes.
// RUN: tilecraft-opt %S/Inputs/good.mlir -p convert-te-to-loop -t asm | filecheck %s --check-prefix=ASM
// ASM: .globl add
// ASM: ret

// A model is lowered first; the error points at its first graph op.
// RUN: not tilecraft-opt %s -t llvm 2>&1 | filecheck %s --check-prefix=GRAPH
// GRAPH: opt-targets.mlir:[[# @LINE + 8]]:3: error: -t llvm: the input is graph-level IR ('graph.relu'), a model; it takes te, loop or llvm IR: lower the model with tilecraft-opt -p compile-model first
// RUN: tilecraft-opt %s -p compile-model -t llvm | filecheck %s --check-prefix=MODEL
// MODEL: define void @main(

// An unknown target names tilecraft's.
// RUN: not tilecraft-opt %s -t wgls 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: tilecraft-opt: error: argument -t/--target: unknown target 'wgls' (tilecraft's: mlir, llvm, asm, accel-asm; xDSL's: see --help-xdsl)
func.func @main(%x: tensor<4xf32> {tc.name = "x"}) -> tensor<4xf32> {
  %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// RUN: tilecraft-opt -v | filecheck %s --check-prefix=VERSION
// VERSION: tilecraft-opt from tilecraft {{[0-9]+\.[0-9]+\.[0-9]+}}, on xDSL {{[0-9.]+}}

// RUN: tilecraft-opt --help | filecheck %s --check-prefix=HELP
// HELP:      -t TARGET, --target TARGET
// HELP-NEXT: what to write: mlir, llvm, asm, accel-asm
// HELP:      tilecraft passes (-p), by level, in pipeline order:
// HELP-NEXT:   pipelines:    compile-model check-graph-level
// HELP-NEXT:   graph level:  infer-shapes
// HELP:      tilecraft targets (-t):
// HELP-NEXT:   mlir          the IR (default)
// HELP-NEXT:   llvm          LLVM IR for the host CPU
// HELP:      xDSL's own {{[0-9]+}} passes (canonicalize, cse, dce, ...) and its targets run too
// HELP-NOT:  convert-scf-to-openmp
// RUN: tilecraft-opt --help-xdsl | filecheck %s --check-prefix=XDSL
// XDSL:      run them on tilecraft IR at your own risk.
// XDSL:      xDSL passes ({{[0-9]+}}):
// XDSL:      convert-scf-to-openmp
// XDSL:      xDSL targets (-t):
// XDSL-NEXT:   arm-asm csl
// XDSL-NEXT: (xDSL's llvm target: tilecraft's of that name stands for it.)
