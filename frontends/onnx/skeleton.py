"""An ONNX model without the data of its large initializers, and the digest of a model.

onnx's version converter and protobuf's serializer go through every byte of a
model: a model with 548 MB of weights (VGG-19) took 11 s to convert from opset 9
and 2 s to serialize, for a graph of 50 nodes. What neither needs, the weights'
values, is left out: `skeleton` gives the model with its large floating-point
initializers' data removed (name, type and dims kept) and those initializers by
name, to be put back after the conversion (`restore`).

Only floating-point tensors are left out: the converter's adapters read integer
initializers (shapes, axes, pads) where an operator moved an attribute to an input.
"""

from __future__ import annotations

import hashlib
from math import prod

import onnx

# Below this many elements a tensor is kept: copying it costs nothing.
MIN_ELEMENTS = 4096
_FLOATS = {
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.BFLOAT16,
}


def _copy_fields(source, target, skip: str) -> None:
    """`target` gets `source`'s fields but `skip` (a shallow protobuf copy; the
    skipped field's value is never read: reading a bytes field copies it)."""
    for field in source.DESCRIPTOR.fields:
        name = field.name
        if name == skip:
            continue
        if field.is_repeated:
            values = getattr(source, name)
            if len(values):
                getattr(target, name).extend(values)
        elif field.message_type is not None:
            if source.HasField(name):
                getattr(target, name).CopyFrom(getattr(source, name))
        elif not field.has_presence or source.HasField(name):
            setattr(target, name, getattr(source, name))


def _left_out(tensor: onnx.TensorProto) -> bool:
    return (
        tensor.data_type in _FLOATS
        and tensor.data_location != onnx.TensorProto.EXTERNAL
        and prod(tensor.dims) >= MIN_ELEMENTS
    )


def skeleton(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, onnx.TensorProto]]:
    """`model` (not changed) without its large float initializers' data, and those
    initializers by name. The skeleton is a copy; the initializers are `model`'s."""
    result = onnx.ModelProto()
    _copy_fields(model, result, "graph")
    _copy_fields(model.graph, result.graph, "initializer")
    left_out: dict[str, onnx.TensorProto] = {}
    for tensor in model.graph.initializer:
        if _left_out(tensor):
            left_out[tensor.name] = tensor
            result.graph.initializer.add(name=tensor.name, data_type=tensor.data_type, dims=tensor.dims)
        else:
            result.graph.initializer.append(tensor)
    return result, left_out


def restore(model: onnx.ModelProto, left_out: dict[str, onnx.TensorProto]) -> onnx.ModelProto:
    """`model` (a skeleton, or made from one) with the left-out initializers' data back."""
    for tensor in model.graph.initializer:
        original = left_out.get(tensor.name)
        if original is not None:
            tensor.CopyFrom(original)
    return model


def model_digest(model: onnx.ModelProto) -> str:
    """A SHA-256 of everything `model` holds: its skeleton's bytes, then each left-out
    initializer: its other fields serialized, its raw data as is."""
    shape, left_out = skeleton(model)
    digest = hashlib.sha256(shape.SerializeToString(deterministic=True))
    for name, tensor in left_out.items():
        rest = onnx.TensorProto()
        _copy_fields(tensor, rest, "raw_data")
        digest.update(b"%d\0" % len(name.encode()) + name.encode())
        digest.update(b"%d\0" % rest.ByteSize() + rest.SerializeToString(deterministic=True))
        data = tensor.raw_data  # hashed as is: serializing it would copy it once more
        digest.update(b"%d\0" % len(data))
        digest.update(data)
    return digest.hexdigest()
