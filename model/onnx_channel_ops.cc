#include "model/onnx_channel_ops.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace layerplan::onnx_import {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (const int64_t d : shape) text += (text.empty() ? "" : ", ") + (d == kBatchDim ? "N" : std::to_string(d));
  return "(" + text + ")";
}

// Whether a Reshape to `shape` (kBatchDim the batch) gives (N, dims...): the batch kept
// (kBatchDim, or 0 unless allowzero) or inferred (-1), every other entry its dim, or -1 for
// at most one of all of them.
bool reshapes_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims, bool allowzero) {
  if (shape.size() != dims.size() + 1) return false;
  int inferred = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      ++inferred;
    } else if (i == 0 ? shape[i] != kBatchDim && (shape[i] != 0 || allowzero) : shape[i] != dims[i - 1]) {
      return false;
    }
  }
  return inferred <= 1;
}

// The groups of a first Reshape to (N, g, C/g, H, W) of an (N, C, H, W) input; 0 when the
// shape is not that.
int64_t shuffle_groups(const std::vector<int64_t>& shape, const Shape& in, bool allowzero) {
  if (shape.size() != 5) return 0;
  int64_t groups = shape[1];
  if (groups == -1 && shape[2] > 0 && in.c() % shape[2] == 0) groups = in.c() / shape[2];
  if (groups < 2 || in.c() % groups != 0) return 0;
  return reshapes_to(shape, {groups, in.c() / groups, in.h(), in.w()}, allowzero) ? groups : 0;
}

// The node that alone reads `node`'s output 0 and is `op_type`, or null.
const onnx::NodeProto* sole_reader(const NodeContext& n, const onnx::NodeProto& node, const char* op_type) {
  const auto& readers = n.readers(node.output(0));
  if (readers.size() != 1 || !readers[0] || readers[0]->op_type() != op_type || !readers[0]->domain().empty()) {
    return nullptr;
  }
  return readers[0]->input_size() > 0 && readers[0]->input(0) == node.output(0) ? readers[0] : nullptr;
}

const char* const kShuffleForm =
    "expected a channel shuffle: Reshape to (N, g, C/g, H, W), Transpose (perm 0, 2, 1, 3, 4), Reshape to "
    "(N, C, H, W)";

// The first Reshape of a channel shuffle: the layer, with the Transpose and the second
// Reshape taken into it.
void start_shuffle(NodeContext& n, const Activation& x, int64_t groups) {
  const onnx::NodeProto* transpose = sole_reader(n, n.node(), "Transpose");
  const onnx::NodeProto* back = transpose ? sole_reader(n, *transpose, "Reshape") : nullptr;
  if (!back) n.fail(std::string("a Reshape to 5-D that no single Transpose reads: ") + kShuffleForm);
  for (const onnx::AttributeProto& a : transpose->attribute()) {
    if (a.name() == "perm" &&
        std::vector<int64_t>(a.ints().begin(), a.ints().end()) != std::vector<int64_t>{0, 2, 1, 3, 4}) {
      n.fail(std::string("its Transpose has another perm: ") + kShuffleForm);
    }
  }
  const int layer = n.graph().channel_shuffle(n.layer_name(nullptr), x.layer, static_cast<int>(groups));
  n.absorb(*transpose, layer, 4);
  n.absorb(*back, layer, 4);  // its handler checks its shape, known only when it runs
}

}  // namespace

bool channel_shuffle_reshape(NodeContext& n) {
  const bool allowzero = n.int_attribute("allowzero", 0) != 0;
  if (n.absorbed()) {
    // The second Reshape: its shape must give (N, C, H, W) back.
    const Activation y = n.activation(0);
    const Shape& s = n.graph().layer(y.layer).output;
    const std::vector<int64_t>* shape = n.shape_value(1);
    if (!shape || !reshapes_to(*shape, {s.c(), s.h(), s.w()}, allowzero)) {
      n.fail("shape " + (shape ? shape_text(*shape) : std::string("not computed from shapes")) + ": " + kShuffleForm);
    }
    return true;
  }
  const std::vector<int64_t>* shape = n.shape_value(1);
  if (!shape || shape->size() != 5) return false;
  const Activation x = n.activation(0);
  const Shape& in = n.graph().layer(x.layer).output;
  const int64_t groups = x.rank == 4 ? shuffle_groups(*shape, in, allowzero) : 0;
  if (groups == 0) n.fail("shape " + shape_text(*shape) + " of a " + in.str() + " input: " + kShuffleForm);
  start_shuffle(n, x, groups);
  return true;
}

namespace {

// Element-wise integer arithmetic of two shape values (one may have a single element,
// broadcast); the batch, unknown, cannot take part.
void combine(NodeContext& n, const char* what, const std::function<int64_t(int64_t, int64_t)>& op) {
  const std::vector<int64_t> a = *n.shape_value(0);
  const std::vector<int64_t> b = *n.shape_value(1);
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) {
    n.fail("shapes of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " values");
  }
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  constexpr int64_t kLimit = int64_t{1} << 40;  // shapes are far smaller; no overflow below
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    if (x == kBatchDim || y == kBatchDim) n.fail(std::string(what) + " of the batch size, which the file leaves open");
    if (x < -kLimit || x > kLimit || y < -kLimit || y > kLimit) n.fail(std::string(what) + " of a value beyond 2^40");
    out[i] = op(x, y);
  }
  n.produce_shape_value(std::move(out));
}

}  // namespace

bool shape_arithmetic(NodeContext& n) {
  if (n.node().input_size() != 2 || !n.shape_value(0) || !n.shape_value(1)) return false;
  if (n.node().op_type() == "Add") {
    combine(n, "an Add", std::plus<int64_t>());
  } else {
    combine(n, "a Mul", std::multiplies<int64_t>());
  }
  return true;
}

void div_shapes(NodeContext& n) {
  if (!n.shape_value(0) || !n.shape_value(1)) {
    n.fail("the inputs are not shapes: a Div is read only in shape arithmetic (a channel shuffle's C / g)");
  }
  combine(n, "a Div", [&n](int64_t x, int64_t y) {
    if (y == 0) n.fail("division by zero");
    return x / y;  // truncates, as ONNX's integer Div
  });
}

void cast_shape(NodeContext& n) {
  const std::vector<int64_t>* v = n.shape_value(0);
  if (!v) n.fail("input 0 is not a shape: a Cast is read only in shape arithmetic");
  const int64_t to = n.int_attribute("to", 0);
  if (to != onnx::TensorProto::INT64) n.fail("to " + std::to_string(to) + ": expected 7 (int64), a shape's type");
  n.produce_shape_value(*v);
}

namespace {

// An int64 input of a Slice (starts, ends, axes, steps), one value; `fallback` when absent.
int64_t slice_bound(const NodeContext& n, int slot, const char* what, int64_t fallback) {
  if (!n.has_input(slot)) return fallback;
  const std::vector<int64_t>* v = n.shape_value(slot);
  if (!v || v->size() != 1)
    n.fail(std::string(what) + ": expected one int64 value, a constant or computed from shapes");
  if (v->front() == kBatchDim) n.fail(std::string(what) + " is the batch size");
  return v->front();
}

}  // namespace

void slice_channels(NodeContext& n) {
  const Activation x = n.activation(0);
  const int64_t channels = n.graph().layer(x.layer).output.c();
  const int64_t axis = slice_bound(n, 3, "axes", 0);
  if (axis != 1 && axis != 1 - x.rank) n.fail("axes " + std::to_string(axis) + ": expected the channel axis, 1");
  if (slice_bound(n, 4, "steps", 1) != 1) n.fail("steps other than 1 are not supported");
  // ONNX's bounds: negative ones count from the end, then clamped to [0, C].
  auto bound = [channels](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + channels : v, 0, channels); };
  const int64_t lo = bound(slice_bound(n, 1, "starts", 0));
  const int64_t hi = bound(slice_bound(n, 2, "ends", std::numeric_limits<int64_t>::max()));
  if (hi <= lo) n.fail("channels [" + std::to_string(lo) + ", " + std::to_string(hi) + ") are empty");
  if (lo == 0 && hi == channels) {
    n.alias(x);
    return;
  }
  n.produce(n.graph().channel_slice(n.layer_name(nullptr), x.layer, lo, hi - lo), x.rank);
}

}  // namespace layerplan::onnx_import
