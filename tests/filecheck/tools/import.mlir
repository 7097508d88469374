// tilecraft-import on a tiny MLP built at test time (Inputs/make_models.py).
// RUN: rm -rf %t && python %S/Inputs/make_models.py %t
// RUN: tilecraft-import %t/mlp.onnx -o %t/mlp.mlir
// RUN: filecheck %s --input-file %t/mlp.mlir
// The output parses and verifies, and the weight file it names holds the weights.
// RUN: tilecraft-opt %t/mlp.mlir | filecheck %s
// RUN: python -c "import numpy as np; print(sorted(np.load('%t/mlp.weights.npz').files))" | filecheck %s --check-prefix=NPZ
// A relative -o gives a weight path relative to the same directory.
// RUN: cd %t && tilecraft-import mlp.onnx -o rel.mlir && filecheck %s --check-prefix=REL --input-file rel.mlir
// Without -o the IR goes to stdout; --weights says where the arrays go.
// RUN: cd %t && tilecraft-import mlp.onnx --weights w.npz | filecheck %s --check-prefix=STDOUT
// A dynamic dimension keeps its ONNX name (a `?` the type's encoding names)...
// RUN: tilecraft-import %t/dynamic.onnx | filecheck %s --check-prefix=SYMBOLIC
// SYMBOLIC: func.func @main(%x: tensor<?x4xf32, ["batch"]> {tc.name = "x"}) -> (tensor<?x4xf32, ["batch"]> {tc.name = "y"})
// ...or is fixed with --input-shape, spelled as a shape (3x4) or a list (3,4).
// RUN: tilecraft-import %t/dynamic.onnx --input-shape x=3x4 | filecheck %s --check-prefix=SHAPE
// RUN: tilecraft-import %t/dynamic.onnx --input-shape x=3,4 | filecheck %s --check-prefix=SHAPE

// CHECK:      builtin.module attributes {graph.weights = "{{.*}}/mlp.weights.npz"} {
// Graph inputs and outputs keep their ONNX names; values print under them.
// CHECK-NEXT:   func.func @main(%x: tensor<2x8xf32> {tc.name = "x"}) -> (tensor<2x4xf32> {tc.name = "logits"}, tensor<2x4xf32> {tc.name = "probs"}) {
// Gemm with transB=1: the initializer is already [N, K], dense takes it as is;
// the 16-element bias is small enough to be inline.
// CHECK-NEXT:     %[[W1:.*]] = graph.weight "fc1.weight" : tensor<16x8xf32>
// CHECK-NEXT:     %[[B1:.*]] = graph.constant dense<[{{.*}}]> : tensor<16xf32>
// CHECK-NEXT:     %[[H:.*]] = graph.dense %x, %[[W1]], %[[B1]] : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:     %[[A:.*]] = graph.relu %[[H]] : (tensor<2x16xf32>) -> tensor<2x16xf32>
// MatMul with a [K, N] weight: stored transposed, under a derived name.
// CHECK-NEXT:     %[[W2:.*]] = graph.weight "fc2.weight.T" : tensor<4x16xf32>
// CHECK-NEXT:     %[[Z:.*]] = graph.dense %[[A]], %[[W2]] : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:     %[[B2:.*]] = graph.constant dense<[{{.*}}]> : tensor<4xf32>
// CHECK-NEXT:     %[[L:.*]] = graph.add %[[Z]], %[[B2]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:     %[[P:.*]] = graph.softmax %[[L]] {axis = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:     func.return %[[L]], %[[P]] : tensor<2x4xf32>, tensor<2x4xf32>

// NPZ: ['fc1.weight', 'fc2.weight.T']

// REL: builtin.module attributes {graph.weights = "rel.weights.npz"} {

// STDOUT: builtin.module attributes {graph.weights = "w.npz"} {
// STDOUT: graph.softmax

// Nothing to store: no weight file, no graph.weights attribute.
// SHAPE:      builtin.module {
// SHAPE-NEXT:   func.func @main(%x: tensor<3x4xf32> {tc.name = "x"}) -> (tensor<3x4xf32> {tc.name = "y"}) {
// SHAPE-NEXT:     %y = graph.relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
