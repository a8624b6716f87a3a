#include "runtime/kernels/kernel_checks.h"

#include <algorithm>
#include <cmath>

#include <stdexcept>
#include <string>

namespace layerplan::kernels_internal {

namespace {
std::string who(const LayerRef& l) {
  return "layer " + l.layer.name + " (" + std::string(kind_name(l.layer.kind)) + ")";
}
}  // namespace

void check_kind(const LayerRef& l, LayerKind kind) {
  if (l.layer.kind != kind) {
    throw std::invalid_argument(who(l) + " given to the " + std::string(kind_name(kind)) + " kernel");
  }
}

void check_out_box(const LayerRef& l, const Box& out_box) {
  const Box whole = Box::whole(l.layer.output);
  if (out_box.empty() || intersect(out_box, whole) != out_box) {
    throw std::invalid_argument(who(l) + ": output box " + out_box.str() + " is empty or outside " +
                                whole.str());
  }
}

namespace {
Box checked_need(const LayerRef& l, int slot, const Tensor& input, const Box& out_box) {
  const Box need = l.required_input(slot, out_box);
  if (!input.contains(need)) {
    throw std::invalid_argument(who(l) + ": input " + std::to_string(slot) + " must cover " + need.str() +
                                " to compute " + out_box.str() + ", got a tensor of " + input.box().str());
  }
  return need;
}
}  // namespace

Tensor required_input(const LayerRef& l, int slot, const Tensor& input, const Box& out_box) {
  return crop(input, checked_need(l, slot, input, out_box));
}

InputTile::InputTile(const LayerRef& l, int slot, const Tensor& input, const Box& out_box) : input_(&input) {
  const Box need = checked_need(l, slot, input, out_box);
  if (input.box() != need) copy_ = crop(input, need);
}

void check_params(const LayerRef& l, const LayerParams& params, const Box& out_box) {
  const ParamLayout layout = param_layout(l.graph, l.layer);
  const auto rows = static_cast<size_t>(out_box.dim[1].size());
  const size_t weights = rows * static_cast<size_t>(layout.row), biases = layout.has_bias ? rows : 0;
  if (params.channels != out_box.dim[1] || params.row != layout.row || params.weight.size() != weights ||
      params.bias.size() != biases) {
    throw std::invalid_argument(who(l) + ": expected the parameter shard of channels [" +
                                std::to_string(out_box.dim[1].lo) + "," + std::to_string(out_box.dim[1].hi) +
                                ") with " + std::to_string(weights) + " weights and " + std::to_string(biases) +
                                " biases, got channels [" + std::to_string(params.channels.lo) + "," +
                                std::to_string(params.channels.hi) + ") with " +
                                std::to_string(params.weight.size()) + " and " + std::to_string(params.bias.size()));
  }
}

void check_box(const Tensor& t, const Box& expected, const char* what, const LayerRef& l) {
  if (t.box() != expected) {
    throw std::invalid_argument(who(l) + ": " + what + " must have box " + expected.str() + ", got " +
                                t.box().str());
  }
}

namespace {
void check_sums(const LayerRef& l, const char* what, Interval channels, size_t a, size_t b, int64_t count,
                const Box& out_box) {
  const Interval want = out_box.dim[1];
  const auto n = static_cast<size_t>(want.size());
  if (channels != want || a != n || b != n || count <= 0) {
    throw std::invalid_argument(who(l) + ": " + what + " of channels [" + std::to_string(channels.lo) + "," +
                                std::to_string(channels.hi) + ") with " + std::to_string(a) + " sums over " +
                                std::to_string(count) + " elements given for a tile of channels [" +
                                std::to_string(want.lo) + "," + std::to_string(want.hi) + ")");
  }
}
}  // namespace

Normalization normalization(const BatchNormStats& s, double eps) {
  Normalization z;
  for (size_t i = 0; i < s.sum.size(); ++i) {
    const double mean = s.sum[i] / static_cast<double>(s.count);
    const double var = std::max(0.0, s.sum_sq[i] / static_cast<double>(s.count) - mean * mean);  // biased
    z.mean.push_back(mean);
    z.inv_std.push_back(1.0 / std::sqrt(var + eps));
  }
  return z;
}

void check_batch_norm_stats(const LayerRef& l, const BatchNormStats& s, const Box& out_box) {
  check_sums(l, "batch-norm statistics", s.channels, s.sum.size(), s.sum_sq.size(), s.count, out_box);
}

void check_batch_norm_stats(const LayerRef& l, const BatchNormGradStats& s, const Box& out_box) {
  check_sums(l, "batch-norm gradient sums", s.channels, s.sum_dy.size(), s.sum_dy_xhat.size(), 1, out_box);
}

void check_samples_only(const LayerRef& l, const Box& out_box) {
  Box whole = Box::whole(l.layer.output);
  whole.dim[0] = out_box.dim[0];
  if (out_box != whole) {
    throw std::invalid_argument(who(l) + ": tiles may split samples only, expected " + whole.str() + ", got " +
                                out_box.str());
  }
}

void check_labels(const LayerRef& l, const std::vector<int64_t>& labels, const Box& box) {
  if (static_cast<int64_t>(labels.size()) != box.dim[0].size()) {
    throw std::invalid_argument(who(l) + ": expected " + std::to_string(box.dim[0].size()) +
                                " labels (one per sample of " + box.str() + "), got " + std::to_string(labels.size()));
  }
  const int64_t classes = l.layer.output.c() * l.layer.output.h() * l.layer.output.w();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      throw std::invalid_argument(who(l) + ": label " + std::to_string(labels[i]) + " of sample " +
                                  std::to_string(box.dim[0].lo + static_cast<int64_t>(i)) + " is not in [0," +
                                  std::to_string(classes) + ")");
    }
  }
}

TilePadding tile_padding(const Window& w, const Box& out_box, const Box& in_box) {
  TilePadding p;
  const std::array<int, 2> kernel{w.kernel_h, w.kernel_w}, stride{w.stride_h, w.stride_w}, pad{w.pad_h, w.pad_w};
  for (size_t a = 0; a < 2; ++a) {
    const Interval& out = out_box.dim[a + 2];
    const Interval& in = in_box.dim[a + 2];
    const int64_t first = out.lo * stride[a] - pad[a];                  // first input row read
    const int64_t end = (out.hi - 1) * stride[a] - pad[a] + kernel[a];  // one past the last
    p.l[a] = in.lo - first;
    p.r[a] = end - in.hi;
  }
  return p;
}

}  // namespace layerplan::kernels_internal
