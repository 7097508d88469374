"""alter-layout's pattern for `graph.conv2d`: a plain conv in the blocked layouts
(NCHW<b>c data and result, a packed OIHW<i>i<b>o or straddling weight), or a 1x1
conv that stays NCHW on its pixels as one row. The package's docstring says which
convs take which form, and why.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value
from tilecraft.topi.conv2d import pack_conv2d_weight, pack_straddle_weight, unblocked_vector_width as vector_width
from tilecraft.transforms.alter_layout.layouts import NAME, LayoutState, blocked, padded, ranked

STRADDLE_WASTE = 1.5  # the most multiply-adds a straddling kernel may do per useful one


class BlockConv2d(RewritePattern):
    def __init__(self, state: LayoutState):
        self.state = state

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.Conv2dOp, rewriter: PatternRewriter) -> None:
        if ranked([*op.operands, *op.results]):
            self.conv2d(op, rewriter)

    def conv2d(self, conv: graph.Conv2dOp, rewriter: PatternRewriter) -> bool:
        """A plain conv2d in the blocked layouts; False (unchanged) where that is not
        supported or the weight is not known."""
        groups = conv.groups
        if conv.layouts() != (0, (0, 0), 0):
            return False
        x, w = conv.input, conv.weight
        if not isinstance(x.type.get_element_type(), Float32Type) or len(graph.shape_of(x.type)) != 4:
            return False  # (blocked layouts are 2-D)
        _, channels, _, _ = graph.shape_of(x.type)
        out_channels = graph.shape_of(w.type)[0]
        # Output channels in blocks of b; where b does not divide them, padded with
        # zero channels up to whole blocks when that adds few (ShuffleNet's 58, 116
        # and 232, a 1000-class 1x1 conv: see `pads`), else in blocks of b/2 or b/4
        # (MobileNet-v2's 24): narrower vectors in the blocked kernel still beat the
        # unblocked one several times.
        # Depthwise (one input and one output channel per group) keeps each channel
        # in its lane: the blocked kernel reads input block and lane = output's.
        depthwise = groups == channels == out_channels
        # Other groups run blocked where each is whole blocks of input and output
        # channels (ResNeXt's), so no block straddles two groups: groups that cut
        # blocks of 16 take blocks of 8 or 4 where those do not (never padded).
        grouped = groups != 1 and not depthwise
        if grouped and (groups <= 0 or channels % groups or out_channels % groups):
            return False
        if grouped:
            b = self.state.channel_block(math.gcd(channels // groups, out_channels // groups))
            if (b is None or b < self.state.block) and self.straddle(conv, rewriter):
                return True
            if b is None:
                return self.flatten_pointwise(conv, rewriter)
        else:
            b = self.state.block if self.state.pads(out_channels) else self.state.channel_block(out_channels)
        if b is None:
            return False
        # Input channels: in blocks as the output's are (padded likewise), or (fewer
        # than a block, an image's 3) all in the kernel's in-block with the data left NCHW.
        if depthwise or grouped:
            data_block = b
        else:
            data_block = self.state.block if self.state.pads(channels) else self.state.channel_block(channels)
        if data_block is None and channels >= self.state.block:
            return False
        weight = known_value(w, self.state.store, NAME)
        if weight is None:
            return False
        out_padded = padded(out_channels, b)
        in_padded = padded(channels, data_block) if data_block else channels
        if depthwise:
            weight = np.pad(weight, [(0, out_padded - out_channels), (0, 0), (0, 0), (0, 0)])
        else:  # zero weights from and to the padded channels
            weight = np.pad(weight, [(0, out_padded - out_channels), (0, in_padded - channels), (0, 0), (0, 0)])
        in_block = 1 if depthwise else data_block or channels
        kernel_layout = f"OIHW{in_block}i{b}o"
        packed = pack_conv2d_weight(weight, in_block, b)
        w_op = self.state.new_value(packed, w, kernel_layout)
        data, data_layout = (
            (self.state.to_blocked(x, data_block, conv, rewriter), blocked(data_block)) if data_block else (x, "NCHW")
        )
        changes = {"groups": out_padded} if depthwise and out_padded != out_channels else {}
        new = conv.with_properties(
            [data, w_op.results[0]], data_layout=data_layout, kernel_layout=kernel_layout, out_layout=blocked(b), **changes
        )
        new_ops: list[Operation] = [w_op, new]
        result = new.outputs[0]
        if conv.bias is not None:
            result = self.add_blocked_bias(conv.bias, result, out_channels, out_padded, b, new_ops)
        self.state.replace_blocked(conv, new_ops, result, b, rewriter)
        return True

    def add_blocked_bias(self, bias: SSAValue, result: SSAValue, channels: int, padded_channels: int, b: int,
                         new_ops: list[Operation]) -> SSAValue:  # fmt: skip
        """`result` (NCHW<b>c) plus the conv's bias as [C/b, 1, 1, b] blocks (padded
        to `padded_channels`): the ops go to `new_ops`, the sum is returned."""
        shape = [padded_channels // b, 1, 1, b]
        known = known_value(bias, self.state.store, NAME)
        if known is not None:
            b_op = self.state.new_value(np.pad(known, (0, padded_channels - channels)).reshape(shape), bias, "blocked")
        elif padded_channels != channels:
            pad = graph.PadOp([bias], {"pads": [0, padded_channels - channels]})
            new_ops.append(pad)
            b_op = graph.ReshapeOp([pad.outputs[0]], {"shape": shape})
        else:
            b_op = graph.ReshapeOp([bias], {"shape": shape})
        add = graph.AddOp([result, b_op.results[0]])
        new_ops += [b_op, add]
        return add.outputs[0]

    def straddle(self, conv: graph.Conv2dOp, rewriter: PatternRewriter) -> bool:
        """A grouped conv whose groups cut blocks of 16 (ShuffleNet v1's 34, 68 and
        136 channels per group) in 16-lane blocks with a straddling kernel
        ("straddle<C>c<O>o<i>i16o": topi/conv2d.py; each row reads exactly its
        group's channels, i = gcd(C/groups, 16) at a time), where an output block
        holds at most two groups and the rows do at most STRADDLE_WASTE times the
        useful multiply-adds: no 2-, 4- or 8-lane vectors and no layout transforms
        between 16-lane blocks and narrower ones. Channels the block does not
        divide are padded to whole blocks where `pads` allows it."""
        x, w = conv.input, conv.weight
        _, channels, _, _ = graph.shape_of(x.type)
        out_channels = graph.shape_of(w.type)[0]
        b = self.state.block
        if out_channels % b and not self.state.pads(out_channels) or any(d != 1 for d in conv.dilations):
            return False
        # The input in 16-lane blocks (padded as `pads` allows), else in the block its
        # channels take (ShuffleNet v1's first grouped conv reads 24 in 8-lane blocks).
        data_block = b if channels % b == 0 or self.state.pads(channels) else self.state.channel_block(channels)
        if data_block is None:
            return False
        sub = math.gcd(channels // conv.groups, data_block)
        try:
            rows = graph.straddle_rows(channels, out_channels, conv.groups, sub, b)
        except ValueError:
            return False
        # Output lanes computed per useful one: 1.18x for 68 per group (272 channels),
        # 1.41x for 34 (136 channels in 9 blocks), 1.06x for 136 (544 channels),
        # 1.43x for 28 (112 channels).
        if len(rows.group) * b > STRADDLE_WASTE * out_channels:
            return False
        weight = known_value(w, self.state.store, NAME)
        if weight is None:
            return False
        layout = f"straddle{channels}c{out_channels}o{sub}i{b}o"
        w_op = self.state.new_value(pack_straddle_weight(weight, channels, conv.groups, sub, b), w, layout)
        new = conv.with_properties(
            [self.state.to_blocked(x, data_block, conv, rewriter), w_op.results[0]],
            data_layout=blocked(data_block), kernel_layout=layout, out_layout=blocked(b),
        )
        new_ops: list[Operation] = [w_op, new]
        result = new.outputs[0]
        out_padded = padded(out_channels, b)
        if conv.bias is not None:
            result = self.add_blocked_bias(conv.bias, result, out_channels, out_padded, b, new_ops)
        self.state.replace_blocked(conv, new_ops, result, b, rewriter)
        return True

    def flatten_pointwise(self, conv: graph.Conv2dOp, rewriter: PatternRewriter) -> bool:
        """A 1x1 conv with stride 1 and no pads that stays NCHW (groups cut blocks
        of 4: ShuffleNet v1's 34 channels per group) on its H x W pixels as one row:
        the unblocked kernel vectorizes the output row, and a 28 x 28 row of 784
        takes 16-lane vectors where 28 took 4 (2-2.5x faster measured here). The
        reshapes are free where they fuse into the kernels around the conv."""
        x, w = conv.input, conv.weight
        n, channels, h, width = graph.shape_of(x.type)
        kernel = graph.shape_of(w.type)[2:]
        if h == 1 or tuple(kernel) != (1, 1) or any(s != 1 for s in conv.strides) or any(conv.pads):
            return False
        if vector_width(h * width) <= vector_width(width):
            return False
        row = graph.ReshapeOp([x], {"shape": [n, channels, 1, h * width]})
        new = conv.with_properties([row.outputs[0], conv.weight, *graph.present(conv.bias)])
        out = graph.shape_of(conv.outputs[0].type)
        back = graph.ReshapeOp([new.outputs[0]], {"shape": list(out)})
        rewriter.replace(conv, [row, new, back], [back.outputs[0]])
        return True

