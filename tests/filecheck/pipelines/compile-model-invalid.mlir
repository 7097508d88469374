// RUN: not tilecraft-opt %s -p compile-model 2>&1 | filecheck %s
// RUN: not tilecraft-opt %s -p 'compile-model{fusion=false}' 2>&1 | filecheck %s --check-prefix=OPTION

// A stage's error names the op and the pass: here a weight with no store.
// CHECK: compile-model-invalid.mlir:[[# @LINE + 2]]:3: error: {{.*}}no weight store{{.*}}'fc.weight'
func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}) -> tensor<4x8xf32> {
  %w = graph.weight "fc.weight" : tensor<8x16xf32>
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// OPTION: tilecraft-opt: error: bad pass pipeline 'compile-model{fusion=false}'
