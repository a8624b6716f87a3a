#pragma once
// Private to model/: the ONNX operators of channel shuffles and channel slices, and the
// integer shape arithmetic PyTorch exports around them (model/onnx_ops.h has the table).
//
// ShuffleNet's channel_shuffle(x, g) exports as Reshape(x, (N, g, C/g, H, W)),
// Transpose(perm 0, 2, 1, 3, 4), Reshape(., (N, -1, H, W)), its shapes computed with Shape,
// Gather, Div, Cast, Unsqueeze and Concat nodes; x.chunk(2, dim=1) exports as two Slice
// nodes whose bounds Add, Div and Mul compute from the channel count.
#include "model/onnx_ops.h"

namespace layerplan::onnx_import {

// A Reshape of a channel shuffle: the first (to 5-D, followed by the Transpose and the
// second Reshape), which makes the channel_shuffle layer and takes the other two into it,
// or the second, which checks that its shape gives the shuffle's output back. False for
// any other Reshape.
bool channel_shuffle_reshape(NodeContext& n);

// Add or Mul of two shape values (integer arithmetic on shapes); false when an input is
// not a shape value.
bool shape_arithmetic(NodeContext& n);

// Div of shape values (integer division, as ONNX's Div of int64).
void div_shapes(NodeContext& n);
// Cast of a shape value to int64 (PyTorch casts the results of its divisions).
void cast_shape(NodeContext& n);
// Slice of an activation along channels: a channel_slice layer.
void slice_channels(NodeContext& n);

}  // namespace layerplan::onnx_import
