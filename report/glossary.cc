#include "report/glossary.h"

#include <cstdio>
#include <utility>

#include "planner/planner.h"

namespace layerplan::report {

namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fraction * 100);
  return text;
}

// No '<' or '&' needed: the writer escapes text anyway.
const std::vector<std::pair<std::string, std::string>>& entries() {
  static const std::vector<std::pair<std::string, std::string>> kEntries = {
      {"step",
       "One training iteration on all GPUs, as the planner predicts it: the forward pass, the backward pass, "
       "and whatever the gradient all-reduces add to them (docs/cost-model.md)."},
      {"chosen plan",
       "The strategy `layerplan plan` writes and the runtime trains with: the fastest candidate by "
       "the step, or data parallelism when nothing beats it by more than the simplicity margin."},
      {"layer-wise (searched plan)",
       "The plan of the layer-wise search: a configuration for each layer on its own, found by the exact search "
       "over the cost model. It is the chosen plan unless a baseline, a mix or a plan on fewer nodes is faster on "
       "the step, or the simplicity margin keeps data parallelism; then the page shows it beside the chosen one."},
      {"data parallel",
       "A baseline: every layer split by samples over all GPUs; each GPU holds all the weights and "
       "the gradients are all-reduced every step."},
      {"model parallel",
       "A baseline: every layer split by channels where its kind allows (over as many GPUs as "
       "divide its channels), by samples over the rest."},
      {"owt",
       "\u201cOne weird trick\u201d (Krizhevsky, 2014), a baseline: data parallel up to the first "
       "fully-connected layer, split by channels from there on."},
      {"baseline",
       "One of the three fixed strategies the search is compared with: data parallel, model parallel, "
       "owt."},
      {"configuration",
       "How a layer is split: its degree in each dimension (n samples, c channels, h height, w "
       "width; n4 c2 is 8 tiles) and the GPUs that compute the tiles."},
      {"tile", "The part of a layer's output one GPU computes; tiles are numbered as in docs/plan-format.md."},
      {"compute", "The layers' forward and backward kernels, priced on the GPU by the cost model."},
      {"transfer",
       "The moves between layers: a tile's inputs sent from the GPUs that computed them when two "
       "layers are split differently, and the gradients sent back in the backward pass."},
      {"sync",
       "The weight gradients' all-reduces among the GPUs that hold copies of a layer's weights, gathered "
       "into buckets."},
      {"exposed",
       "The part of sync the step waits for: the step less the forward and backward passes. All-reduces "
       "that run beside the backward pass are hidden and not exposed."},
      {"additive",
       "The search's objective: compute, transfer and sync of every layer added up as if nothing "
       "overlapped. The search minimises it; the plans are compared by the step."},
      {"speedup", "Data parallelism's step divided by the strategy's: above 1x it is faster than data parallelism."},
      {"comm MB/step", "Megabytes moved per step: the transfers and the all-reduces."},
      {"simplicity margin",
       "How much faster than data parallelism a plan must be to be chosen over it "
       "(`--min-gain`, " +
           percent(kDefaultMinGain) + " by default)."},
      {"hollow point",
       "In the scaling chart: no searched plan at that GPU count (the layer-wise search ran out of its time "
       "budget, or the plan came from a plan file), and the chosen plan stands in."},
  };
  return kEntries;
}

}  // namespace

std::vector<std::string> glossary_terms() {
  std::vector<std::string> out;
  for (const auto& [term, meaning] : entries()) out.push_back(term);
  return out;
}

void write_glossary(XmlWriter& xml) {
  xml.open("section", {{"id", "glossary"}});
  xml.leaf("h2", {}, "Glossary");
  xml.open("dl", {{"class", "glossary"}});
  for (const auto& [term, meaning] : entries()) {
    xml.leaf("dt", {{"data-term", term}}, term);
    xml.leaf("dd", {}, meaning);
  }
  xml.close();
  xml.close();
}

}  // namespace layerplan::report
