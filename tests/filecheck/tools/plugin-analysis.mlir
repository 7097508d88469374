// A plugin's analysis (Inputs/plugin/myplugin/analysis.py, registered when the
// plugin loads) runs by name, in tilecraft-analyze and tilecraft-opt --annotate alike.

// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-analyze %s --analysis scaled-relus,macs --json %t.json | filecheck %s
// CHECK:      name {{ +}}op {{ +}}macs {{ +}}flops
// CHECK-NEXT: d {{ +}}graph.dense {{ +}}512 {{ +}}1,024
// CHECK-NEXT: y {{ +}}myplugin.scaled_relu {{ +}}0 {{ +}}32
// CHECK-NEXT: total {{ +}}512 {{ +}}1,056
// RUN: python -c "import json; d = json.load(open('%t.json')); print(d['totals']['scaled_relus'], d['totals']['alpha'])" | filecheck %s --check-prefix=JSON
// JSON: 1 2.5

// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin tilecraft-opt %s --annotate=scaled-relus | filecheck %s --check-prefix=ANNOTATE
// ANNOTATE: myplugin.scaled_relu %d {alpha = 2.500000e+00 : f32, tc.scaled_relus = 1 : i64, tc.alpha = 2.500000e+00 : f64}

// Dependencies that cannot be met: one line naming both analyses, exit 1.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-analyze %s --analysis needs-missing 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: tilecraft-analyze: error: analysis 'needs-missing' requires 'no-such-analysis', which is not registered
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-opt %s --annotate=cycle-a 2>&1 | filecheck %s --check-prefix=CYCLE
// CYCLE: tilecraft-opt: error: analyses 'cycle-b' and 'cycle-a' require each other (a cycle)
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-analyze %s --level loop --analysis loop-needs-graph 2>&1 | filecheck %s --check-prefix=LEVEL
// LEVEL: tilecraft-analyze: error: analysis 'loop-needs-graph' (loop level) requires 'macs', which is a graph-level analysis

// Without the plugin on the path the name is unknown.
// RUN: not tilecraft-analyze %s --analysis scaled-relus 2>&1 | filecheck %s --check-prefix=NONE
// NONE: error

func.func @main(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = myplugin.scaled_relu %d {alpha = 2.5 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
