// RUN: tilecraft-opt %s -p compile-model | filecheck %s

// A model whose batch is known only when it runs, through the whole pipeline:
// @main takes memrefs with `?` sizes (named by `tc.dims`), reads `batch` from
// its input, allocates the intermediate value with it (a buffer of its own: the
// arena is static), and each kernel reads `batch` from its own arguments.
func.func @main(%x: tensor<?x64xf32, ["batch"]> {tc.name = "x"}) -> tensor<?x16xf32, ["batch"]> {
  %w1 = graph.constant dense<0.5> : tensor<32x64xf32>
  %w2 = graph.constant dense<0.25> : tensor<16x32xf32>
  %h = graph.dense %x, %w1 : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<*xf32>
  %r = graph.relu %h : (tensor<*xf32>) -> tensor<*xf32>
  %y = graph.dense %r, %w2 : (tensor<*xf32>, tensor<16x32xf32>) -> tensor<?x16xf32, ["batch"]>
  func.return %y : tensor<?x16xf32, ["batch"]>
}

// CHECK:       func.func @main(%x: memref<?x64xf32> {tc.name = "x", tc.dims = ["batch"]}, %out0: memref<?x16xf32> {tc.name = "out0", tc.dims = ["batch"]})
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %batch = memref.dim %x, %[[ZERO]] : memref<?x64xf32>
// CHECK-NEXT:    %[[H:.*]] = loop.alloc "fused_dense_relu_0" global(%batch) : memref<?x32xf32>
// CHECK:         func.call @fused_dense_relu(%x, %{{.*}}, %[[H]]) : (memref<?x64xf32>, memref<{{.*}}>, memref<?x32xf32>) -> ()
// CHECK:         func.call @fused_dense(%[[H]], %{{.*}}, %out0) : (memref<?x32xf32>, memref<{{.*}}>, memref<?x16xf32>) -> ()
// CHECK:       func.func @fused_dense_relu(%p0: memref<?x64xf32> {tc.name = "p0", tc.dims = ["batch"]}
// CHECK:         %batch{{.*}} = memref.dim %p0
