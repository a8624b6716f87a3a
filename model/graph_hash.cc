#include "model/graph_hash.h"

#include <cstdio>

#include "model/content_hash.h"

namespace layerplan {

namespace {

// Version of the canonical text: a change to it changes every graph's hash, so that plans
// recorded under the old text are refused rather than compared wrongly.
constexpr const char* kCanonicalHeader = "layerplan-graph 1\n";

void put(std::string& out, int64_t value) { out += std::to_string(value) + " "; }

void put(std::string& out, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g ", value);
  out += text;
}

// A name as its length and bytes, so that no name can imitate a field separator.
void put(std::string& out, const std::string& text) { out += std::to_string(text.size()) + ":" + text + " "; }

void put_layer(std::string& out, const Layer& l) {
  put(out, int64_t{l.id});
  put(out, l.name);
  put(out, std::string(kind_name(l.kind)));
  put(out, static_cast<int64_t>(l.inputs.size()));
  for (const int in : l.inputs) put(out, int64_t{in});
  for (int d = 1; d < kNumDims; ++d) put(out, l.output[d]);  // n is the batch
  const Window& w = l.window;
  for (const int v : {w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w}) put(out, int64_t{v});
  put(out, int64_t{w.ceil_mode});
  put(out, int64_t{w.count_include_pad});
  put(out, int64_t{l.has_bias});
  put(out, int64_t{l.groups});
  put(out, std::string(activation_name(l.activation)));
  put(out, std::string(gelu_approximation_name(l.gelu_approximation)));
  put(out, l.first_channel);
  for (const double v : {l.alpha, l.beta, l.epsilon, l.momentum, l.dropout_ratio}) put(out, v);
  out += "\n";
}

}  // namespace

std::string graph_sha256(const ModelGraph& graph) {
  std::string text = kCanonicalHeader;
  for (const Layer& l : graph.layers()) put_layer(text, l);
  return sha256_hex(text);
}

}  // namespace layerplan
