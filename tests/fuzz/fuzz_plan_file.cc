// Fuzz target: a plan file's text (model/plan_file.h, docs/plan-format.md): its header, and
// for a plan of a zoo model, the model and plan checked together as `layerplan train`
// does (model_and_plan()), then every layer's tiles and the devices the plan uses.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/geometry.h"
#include "model/plan_file.h"
#include "model/zoo.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace layerplan;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] {
    const PlanHeader header = read_plan_header(text, "fuzz plan");
    const auto& zoo = zoo_model_names();
    if (std::find(zoo.begin(), zoo.end(), header.model) == zoo.end()) return;
    // The reader refuses batches and device counts outside the limits; a zoo model is
    // built here for the plan's batch only when the header gives one.
    if (header.batch < 1 || header.batch > kMaxBatch || header.devices < 1) return;
    PlanFile file;
    file.path = "fuzz plan";
    file.text = text;
    file.batch = header.batch;
    file.devices = header.devices;
    file.model = header.model;
    const ModelAndPlan read = model_and_plan(file, std::nullopt, {});
    for (const Layer& layer : read.graph.layers()) tiles(layer.output, read.plan[layer.id]);
    devices_used(read.plan);
  });
  return 0;
}
