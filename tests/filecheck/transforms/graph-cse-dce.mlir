// xDSL's own cse and dce work on graph IR: graph ops are Pure, and two
// graph.weight ops with one name are one value.
// RUN: tilecraft-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: tilecraft-opt %s --split-input-file -p dce | filecheck %s --check-prefix=DCE

func.func @twice(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = graph.weight "fc.weight" : tensor<3x4xf32>
  %w2 = graph.weight "fc.weight" : tensor<3x4xf32>
  %a = graph.dense %x, %w1 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %b = graph.dense %x, %w2 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %s = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CSE-LABEL: func.func @twice
// CSE-NEXT:    %[[W:.*]] = graph.weight "fc.weight" : tensor<3x4xf32>
// CSE-NEXT:    %[[A:.*]] = graph.dense %x, %[[W]]
// CSE-NEXT:    %[[S:.*]] = graph.add %[[A]], %[[A]]
// CSE-NEXT:    func.return %[[S]]

// Nothing is dead here.
// DCE-LABEL: func.func @twice
// DCE-COUNT-2: graph.weight
// DCE-COUNT-2: graph.dense

// -----

// Different weights, attributes or operands are different values.
func.func @different(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) {
  %w1 = graph.weight "conv1.weight" : tensor<2x1x1x1xf32>
  %w2 = graph.weight "conv2.weight" : tensor<2x1x1x1xf32>
  %a = graph.conv2d %x, %w1 : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.conv2d %x, %w2 : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = graph.conv2d %x, %w1 {strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %a, %b, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>
}

// CSE-LABEL: func.func @different
// CSE-COUNT-2: graph.weight
// CSE-COUNT-3: graph.conv2d

// -----

// Unused ops go, in chains: the exp feeds only the unused relu.
func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight "unused" : tensor<4xf32>
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.relu %e : (tensor<4xf32>) -> tensor<4xf32>
  %n = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// DCE-LABEL: func.func @dead
// DCE-NEXT:    %[[N:.*]] = graph.neg %x
// DCE-NEXT:    func.return %[[N]]

// CSE-LABEL: func.func @dead
// CSE: graph.exp

// -----

// A fused group is Pure (its region holds only pure graph ops), so dce removes
// one whose results are unused.
func.func @fused_dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = graph.fused "fused_exp" (%x) : (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %e : tensor<4xf32>
  }
  func.return %x : tensor<4xf32>
}

// DCE-LABEL: func.func @fused_dead
// DCE-NEXT:    func.return %x
