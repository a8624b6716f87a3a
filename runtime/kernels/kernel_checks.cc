#include "runtime/kernels/kernel_checks.h"

#include <stdexcept>
#include <string>

namespace layerplan::kernels_internal {

namespace {
std::string who(const LayerRef& l) {
  return "layer " + l.layer.name + " (" + std::string(kind_name(l.layer.kind)) + ")";
}
}  // namespace

void check_tile(const LayerRef& l, LayerKind kind, const Box& out_box) {
  if (l.layer.kind != kind) {
    throw std::invalid_argument(who(l) + " given to the " + std::string(kind_name(kind)) + " kernel");
  }
  const Box whole = Box::whole(l.layer.output);
  if (out_box.empty() || intersect(out_box, whole) != out_box) {
    throw std::invalid_argument(who(l) + ": output box " + out_box.str() + " is empty or outside " + whole.str());
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

TensorTile::TensorTile(const Tensor& tensor, const Box& box) : tensor_(&tensor) {
  if (tensor.box() != box) copy_ = crop(tensor, box);
}

TensorTile input_tile(const LayerRef& l, int slot, const Tensor& input, const Box& out_box) {
  return TensorTile(input, checked_need(l, slot, input, out_box));
}

InputTiles::InputTiles(const LayerRef& l, const std::vector<const Tensor*>& inputs, const Box& out_box) {
  if (inputs.size() != l.layer.inputs.size()) {
    throw std::invalid_argument("layer " + l.layer.name + ": " + std::string(kind_name(l.layer.kind)) + " of " +
                                std::to_string(l.layer.inputs.size()) + " inputs given " +
                                std::to_string(inputs.size()));
  }
  tiles_.reserve(inputs.size());
  for (size_t slot = 0; slot < inputs.size(); ++slot) {
    const Box need = l.required_input(static_cast<int>(slot), out_box);
    if (need.empty()) {
      tiles_.emplace_back(Tensor(need));
    } else {
      tiles_.push_back(input_tile(l, static_cast<int>(slot), *inputs[slot], out_box));
    }
  }
  pointers_.reserve(tiles_.size());
  for (const TensorTile& tile : tiles_) pointers_.push_back(&*tile);
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
                                std::to_string(params.channels.hi) + ") with " + std::to_string(params.weight.size()) +
                                " and " + std::to_string(params.bias.size()));
  }
}

void check_box(const Tensor& t, const Box& expected, const char* what, const LayerRef& l) {
  if (t.box() != expected) {
    throw std::invalid_argument(who(l) + ": " + what + " must have box " + expected.str() + ", got " + t.box().str());
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

}  // namespace layerplan::kernels_internal
