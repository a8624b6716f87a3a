#include "runtime/training/train_profile.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/safe_write.h"

namespace layerplan {

std::string profile_file(const std::string& file, bool launched, int rank) {
  return launched ? file + ".rank" + std::to_string(rank) : file;
}

void write_profile(const std::string& path, const ModelGraph& graph, const Executor& executor,
                   const TrafficCounts& counts, int rank, double steps) {
  const double per = steps > 0 ? 1.0 / steps : 0.0;
  const auto time = [&](const TrafficCounts::Time& t) {
    return nlohmann::json{{"seconds", t.seconds * per}, {"calls", static_cast<double>(t.calls) * per}};
  };
  nlohmann::json layers = nlohmann::json::array();
  double compute = 0;
  for (int id = 0; id < graph.size(); ++id) {
    double seconds = 0;  // the devices this process holds (one per rank; all of them in one process)
    for (double s : executor.compute_seconds()[static_cast<size_t>(id)]) seconds += s;
    compute += seconds * per;
    const auto layer_time = [&](const std::map<int, TrafficCounts::Time>& times) {
      const auto it = times.find(id);
      return it == times.end() ? TrafficCounts::Time{} : it->second;
    };
    const TrafficCounts::Time moves = layer_time(counts.layer_moves);
    const TrafficCounts::Time statistics = layer_time(counts.layer_statistics);
    layers.push_back({{"layer", graph.layer(id).name},
                      {"compute_s", seconds * per},
                      {"moves", time(moves)},
                      {"statistics_reductions", time(statistics)}});
  }
  const nlohmann::json profile = {{"model", graph.name()},
                                  {"rank", rank},
                                  {"steps", steps},
                                  {"compute_s", compute},
                                  {"communication",
                                   {{"moves", time(counts.moves)},
                                    {"weight_reductions", time(counts.weight_reductions)},
                                    {"statistics_reductions", time(counts.statistics_reductions)},
                                    {"loss_reductions", time(counts.loss_reductions)}}},
                                  {"layers", layers}};
  write_file_safely(path, profile.dump(1) + "\n", "--profile");
}

}  // namespace layerplan
