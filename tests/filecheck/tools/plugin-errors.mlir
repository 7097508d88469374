// Plugins that clash or are misused: one line on stderr naming what is wrong,
// exit code 1, never a traceback. Inputs/plugin-clash defines a dialect named
// `myplugin` (as Inputs/plugin does) and a pass named `fuse-ops` (as tilecraft does).

// Two dialects of one name: both providers are named, even for --help.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin:%S/Inputs/plugin-clash not tilecraft-opt --help 2>&1 | filecheck %s --check-prefix=DIALECT
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin:%S/Inputs/plugin-clash not tilecraft-opt %s 2>&1 | filecheck %s --check-prefix=DIALECT
// DIALECT-NOT: Traceback
// DIALECT: tilecraft-opt: error: dialect 'myplugin' is defined twice, by 'clashplugin' (package clashplugin 0.2.0, clashplugin:UNIVERSE) and by 'myplugin' (package myplugin 0.1.0, myplugin:UNIVERSE); uninstall one of them or rename its dialect
// DIALECT-NOT: Traceback

// A plugin pass named like one of tilecraft's.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin-clash not tilecraft-opt %s -p fuse-ops 2>&1 | filecheck %s --check-prefix=PASS
// PASS-NOT: Traceback
// PASS: tilecraft-opt: error: pass 'fuse-ops' is defined twice, by 'clashplugin' (package clashplugin 0.2.0, clashplugin:UNIVERSE) and by 'tilecraft' (package tilecraft {{.*}}, tilecraft.registry:TILECRAFT_UNIVERSE); uninstall one of them or rename its pass
// PASS-NOT: Traceback

// The plugin pass rejects a value of its option.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-opt %s -p 'scale-relus{alpha=-1.0}' 2>&1 | filecheck %s --check-prefix=ALPHA
// ALPHA-NOT: Traceback
// ALPHA: scale-relus: alpha must be positive, got -1.0
// ALPHA-NOT: Traceback

// alpha is a float option: xDSL does not read `2` as one.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-opt %s -p 'scale-relus{alpha=2}' 2>&1 | filecheck %s --check-prefix=INT
// INT: tilecraft-opt: error: bad pass pipeline 'scale-relus{alpha=2}': Incompatible types: given (2,), expected <class 'float'>

// The plugin's op verifies like a graph op.
// RUN: env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%S/Inputs/plugin not tilecraft-opt %S/Inputs/plugin-bad-op.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY-NOT: Traceback
// VERIFY: plugin-bad-op.mlir:2:3: error: 'myplugin.scaled_relu' op: myplugin.scaled_relu result is tensor<4xf32> but its operands give tensor<8xf32>.

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
