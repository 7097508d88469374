// A plugin (Inputs/plugin: the myplugin dialect, the scale-relus pass, a te
// strategy for myplugin.scaled_relu, an xdsl.universe entry point in its
// dist-info) extends tilecraft-opt once it is on the path; nothing is installed.

// --help lists it apart from tilecraft's own, with the package it comes from.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-opt --help | filecheck %s --check-prefix=HELP
// HELP:      tilecraft passes (-p), by level, in pipeline order:
// HELP:      tilecraft targets (-t):
// HELP:      plugin 'myplugin' (package myplugin 0.1.0, myplugin:UNIVERSE):
// HELP-NEXT:   dialects: myplugin
// HELP-NEXT:   passes:
// HELP-NEXT:     scale-relus
// HELP-NEXT: xDSL's own {{[0-9]+}} passes (canonicalize, cse, dce, ...) and its targets run too

// Without it on the path there is no plugin section.
// RUN: tilecraft-opt --help | filecheck %s --check-prefix=NONE
// NONE-NOT: plugin '

// The pass with an option, and its op printed, parsed and printed again.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-opt %s -p 'scale-relus{alpha=2.0}' \
// RUN:   | env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-opt | filecheck %s
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[D:.*]] = graph.dense %x, %w
// CHECK-NEXT:    %[[Y:.*]] = myplugin.scaled_relu %[[D]] {alpha = 2.000000e+00 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]]

// Its fusion kind (Injective) puts it in the dense's group; its strategy lowers it.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-opt %s \
// RUN:   -p 'scale-relus{alpha=0.5},fuse-ops,convert-graph-to-te' | filecheck %s --check-prefix=TE
// TE-LABEL: func.func @main
// TE-NEXT:    %{{.*}} = func.call @fused_dense_myplugin.scaled_relu(%x, %w)
// TE-LABEL: func.func @fused_dense_myplugin.scaled_relu
// TE:         te.compute "dense"
// TE:         %[[R:.*]] = te.compute "scaled_relu"
// TE:           %[[M:.*]] = arith.maximumf
// TE-NEXT:      %[[A:.*]] = arith.constant 5.000000e-01 : f32
// TE-NEXT:      %[[S:.*]] = arith.mulf %[[M]], %[[A]] : f32
// TE-NEXT:      te.yield %[[S]] : f32
// TE:         func.return %[[R]]

func.func @main(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
