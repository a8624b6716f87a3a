// Writes the model and plan seeds of tests/fuzz/corpus/ (tests/fuzz/README.md): every zoo
// model as a model file, and for the small ones, plan files that split every layer along
// each dimension its kind can split, as far as the batch and 4 devices allow.
//   make_seeds DIR   writes DIR/fuzz_model_file/ZOO.json and DIR/fuzz_plan_file/ZOO-*.json
#include <array>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/zoo.h"

namespace {

using layerplan::ModelGraph;

// A plan that puts `parts` tiles on dimension `dim` of every layer that can split it evenly.
nlohmann::json plan_json(const ModelGraph& graph, int dim, int parts) {
  nlohmann::json plan = {{"format", "layerplan-plan"},
                         {"version", 1},
                         {"model", graph.name()},
                         {"batch", graph.layer(0).output.n()},
                         {"strategy", "layer-wise"},
                         {"cluster", {{"devices", parts}, {"nodes", 1}, {"gpus_per_node", parts}, {"gpu", "p100"}}}};
  nlohmann::json layers = nlohmann::json::array();
  for (const layerplan::Layer& l : graph.layers()) {
    std::array<int, 4> degrees{1, 1, 1, 1};
    if (layerplan::splittable_dims(l.kind)[dim] && l.output.extent[dim] % parts == 0) degrees[dim] = parts;
    nlohmann::json devices = nlohmann::json::array();
    for (int d = 0; d < degrees[0] * degrees[1] * degrees[2] * degrees[3]; ++d) devices.push_back(d);
    layers.push_back({{"id", l.id},
                      {"name", l.name},
                      {"kind", std::string(layerplan::kind_name(l.kind))},
                      {"output_shape", l.output.extent},
                      {"degrees", {{"n", degrees[0]}, {"c", degrees[1]}, {"h", degrees[2]}, {"w", degrees[3]}}},
                      {"devices", devices}});
  }
  plan["layers"] = layers;
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  for (const std::string& name : layerplan::zoo_model_names()) {
    const ModelGraph graph = layerplan::build_zoo_model(name, 8);
    std::ofstream(dir + "/fuzz_model_file/" + name + ".json") << layerplan::model_to_json(graph);
    if (name != "lenet5" && name != "alexnet") continue;
    for (int dim = 0; dim < 4; ++dim) {
      std::ofstream(dir + "/fuzz_plan_file/" + name + "-" + "nchw"[dim] + ".json") << plan_json(graph, dim, 4).dump(1);
    }
  }
  return 0;
}
