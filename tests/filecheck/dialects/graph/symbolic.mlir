// Symbolic sizes in graph types: a `?` named by the type's encoding (one string
// per `?`: a name or an expression). Ops that take them carry them through;
// infer-shapes writes them into results.

// RUN: tilecraft-opt %s --split-input-file -p infer-shapes | filecheck %s

// dense, add (against a bias that broadcasts) and relu keep `batch`; an
// expression stays an expression.
func.func @mlp(%x: tensor<?x64xf32, ["batch"]>, %w: tensor<32x64xf32>, %b: tensor<32xf32>,
               %s: tensor<?x32xf32, ["seq * 12"]>) -> (tensor<*xf32>, tensor<*xf32>) {
  %d = graph.dense %x, %w : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<*xf32>
  %a = graph.add %d, %b : (tensor<*xf32>, tensor<32xf32>) -> tensor<*xf32>
  %r = graph.relu %a : (tensor<*xf32>) -> tensor<*xf32>
  %t = graph.tanh %s : (tensor<?x32xf32, ["seq * 12"]>) -> tensor<*xf32>
  func.return %r, %t : tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:  -> (tensor<?x32xf32, ["batch"]>, tensor<?x32xf32, ["seq * 12"]>)
// CHECK:         %d = graph.dense %x, %w : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %a = graph.add %d, %b : (tensor<?x32xf32, ["batch"]>, tensor<32xf32>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %r = graph.relu %a : (tensor<?x32xf32, ["batch"]>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %t = graph.tanh %s : (tensor<?x32xf32, ["seq * 12"]>) -> tensor<?x32xf32, ["seq * 12"]>

// -----

// Two operands of one size broadcast; a size of 1 broadcasts to `batch`.
func.func @broadcast(%x: tensor<?x8xf32, ["batch"]>, %y: tensor<?x8xf32, ["batch"]>, %o: tensor<1x8xf32>) -> tensor<*xf32> {
  %a = graph.mul %x, %y : (tensor<?x8xf32, ["batch"]>, tensor<?x8xf32, ["batch"]>) -> tensor<*xf32>
  %b = graph.sub %a, %o : (tensor<*xf32>, tensor<1x8xf32>) -> tensor<*xf32>
  func.return %b : tensor<*xf32>
}

// CHECK-LABEL: func.func @broadcast(
// CHECK:         %b = graph.sub %a, %o : (tensor<?x8xf32, ["batch"]>, tensor<1x8xf32>) -> tensor<?x8xf32, ["batch"]>

// -----

// Attention's shape ops with a sequence length: matmul, softmax, transpose,
// layer norm and concat carry `seq` through (concat adds sizes).
func.func @attention(%q: tensor<?x64xf32, ["seq"]>, %k: tensor<?x64xf32, ["seq"]>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %kt = graph.transpose %k : (tensor<?x64xf32, ["seq"]>) -> tensor<*xf32>
  %s = graph.matmul %q, %kt : (tensor<?x64xf32, ["seq"]>, tensor<*xf32>) -> tensor<*xf32>
  %p = graph.softmax %s {axis = -1 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  %n = graph.layer_norm %q, %g, %b {axis = -1 : i64} : (tensor<?x64xf32, ["seq"]>, tensor<64xf32>, tensor<64xf32>) -> tensor<*xf32>
  %c = graph.concat %q, %k {axis = 0 : i64} : (tensor<?x64xf32, ["seq"]>, tensor<?x64xf32, ["seq"]>) -> tensor<*xf32>
  func.return %p, %n, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @attention(
// CHECK:         %kt = graph.transpose %k : (tensor<?x64xf32, ["seq"]>) -> tensor<64x?xf32, ["seq"]>
// CHECK-NEXT:    %s = graph.matmul %q, %kt : (tensor<?x64xf32, ["seq"]>, tensor<64x?xf32, ["seq"]>) -> tensor<?x?xf32, ["seq", "seq"]>
// CHECK-NEXT:    %p = graph.softmax %s {axis = -1 : i64} : (tensor<?x?xf32, ["seq", "seq"]>) -> tensor<?x?xf32, ["seq", "seq"]>
// CHECK-NEXT:    %n = graph.layer_norm {{.*}} -> tensor<?x64xf32, ["seq"]>
// CHECK-NEXT:    %c = graph.concat {{.*}} -> tensor<?x64xf32, ["2 * seq"]>

// -----

// flatten multiplies the sizes it folds together.
func.func @flatten(%x: tensor<?x8x4xf32, ["batch"]>) -> (tensor<*xf32>, tensor<*xf32>) {
  %a = graph.flatten %x : (tensor<?x8x4xf32, ["batch"]>) -> tensor<*xf32>
  %b = graph.flatten %x {axis = 2 : i64} : (tensor<?x8x4xf32, ["batch"]>) -> tensor<*xf32>
  func.return %a, %b : tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @flatten(
// CHECK:         graph.flatten %x : (tensor<?x8x4xf32, ["batch"]>) -> tensor<?x32xf32, ["batch"]>
// CHECK:         graph.flatten %x {axis = 2 : i64} : (tensor<?x8x4xf32, ["batch"]>) -> tensor<?x4xf32, ["8 * batch"]>

// -----

// A reshape resolves 0 (copy the extent) and -1 (what the others leave) against
// symbolic sizes: BERT's heads split and merged again.
func.func @heads(%x: tensor<?x?x64xf32, ["batch", "seq"]>) -> (tensor<*xf32>, tensor<*xf32>) {
  %h = graph.reshape %x {shape = array<i64: 0, 0, 2, 32>} : (tensor<?x?x64xf32, ["batch", "seq"]>) -> tensor<*xf32>
  %m = graph.reshape %h {shape = array<i64: 0, -1, 64>} : (tensor<*xf32>) -> tensor<*xf32>
  %f = graph.reshape %x {shape = array<i64: -1, 32>} : (tensor<?x?x64xf32, ["batch", "seq"]>) -> tensor<*xf32>
  func.return %m, %f : tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @heads(
// CHECK:         %h = graph.reshape %x {{.*}} -> tensor<?x?x2x32xf32, ["batch", "seq"]>
// CHECK-NEXT:    %m = graph.reshape %h {{.*}} -> tensor<?x?x64xf32, ["batch", "seq"]>
// CHECK-NEXT:    %f = graph.reshape %x {{.*}} -> tensor<?x32xf32, ["2 * batch * seq"]>

// -----

// A CNN's ops with a batch: conv2d, batch_norm, max pooling, a layout transform
// to channel blocks, global average pooling carry `batch` through.
func.func @cnn(%x: tensor<?x3x20x20xf32, ["batch"]>, %w: tensor<16x3x3x3xf32>, %p: tensor<16xf32>) -> tensor<*xf32> {
  %c = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x20x20xf32, ["batch"]>, tensor<16x3x3x3xf32>) -> tensor<*xf32>
  %n = graph.batch_norm %c, %p, %p, %p, %p : (tensor<*xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<*xf32>
  %m = graph.max_pool2d %n {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<*xf32>) -> tensor<*xf32>
  %b = graph.layout_transform %m {src = "NCHW", dst = "NCHW8c"} : (tensor<*xf32>) -> tensor<*xf32>
  %g = graph.global_avg_pool2d %b {layout = "NCHW8c"} : (tensor<*xf32>) -> tensor<*xf32>
  func.return %g : tensor<*xf32>
}

// CHECK-LABEL: func.func @cnn(
// CHECK:         %c = graph.conv2d {{.*}} -> tensor<?x16x10x10xf32, ["batch"]>
// CHECK-NEXT:    %n = graph.batch_norm {{.*}} -> tensor<?x16x10x10xf32, ["batch"]>
// CHECK-NEXT:    %m = graph.max_pool2d {{.*}} -> tensor<?x16x5x5xf32, ["batch"]>
// CHECK-NEXT:    %b = graph.layout_transform {{.*}} -> tensor<?x2x5x5x8xf32, ["batch"]>
// CHECK-NEXT:    %g = graph.global_avg_pool2d {{.*}} -> tensor<?x2x1x1x8xf32, ["batch"]>
