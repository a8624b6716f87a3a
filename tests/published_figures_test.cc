// The cost model against published measurements (bench/published/figures.csv): every row is
// priced as the run that produced it trained, data parallel on its cluster, and its predicted
// throughput or scaling efficiency must fall within the row's tolerance of the published
// figure. Rows marked "report" are printed (docs/cost-model.md lists them) but not asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/profile_db.h"
#include "model/zoo.h"
#include "planner/cost_model.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

// The columns, in the file's order.
enum Field : size_t {
  kId,
  kKind,
  kModel,
  kGpu,
  kGpus,
  kGpusPerNode,
  kBaseGpus,
  kBatchPerGpu,
  kPrecision,
  kLayout,
  kFabric,
  kNicGbits,
  kNicsPerNode,
  kPublished,
  kBaseImgS,
  kTolerance,
  kSource,
  kFieldCount
};
constexpr std::array<const char*, kFieldCount> kFields = {
    "id",        "kind",   "model",  "gpu",       "gpus",          "gpus_per_node", "base_gpus",  "batch_per_gpu",
    "precision", "layout", "fabric", "nic_gbits", "nics_per_node", "published",     "base_img_s", "tolerance",
    "source"};

using Row = std::vector<std::string>;  // kFieldCount fields, in kFields' order

struct Table {
  std::vector<Row> rows;
  std::vector<std::string> errors;  // "row ID: missing field NAME"
};

// One line's fields: the source, the last field, is the rest of the line (it may hold commas).
Row split_fields(const std::string& line) {
  Row row;
  size_t at = 0;
  while (at != std::string::npos && row.size() + 1 < kFieldCount) {
    const size_t comma = line.find(',', at);
    row.push_back(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? std::string::npos : comma + 1;
  }
  if (at != std::string::npos) row.push_back(line.substr(at));
  return row;
}

// Reads the CSV: '#' lines are comments, the first other line the header.
Table parse_table(std::istream& in) {
  Table table;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    Row row = split_fields(line);
    const std::string id = row.empty() || row[kId].empty() ? "at line '" + line + "'" : row[kId];
    bool complete = true;
    for (size_t f = 0; f < kFieldCount; ++f) {
      if (f >= row.size() || row[f].empty()) {
        table.errors.push_back("row " + id + ": missing field " + kFields[f]);
        complete = false;
      }
    }
    if (complete) table.rows.push_back(std::move(row));
  }
  return table;
}

Table read_table() {
  std::ifstream in(std::string(LAYERPLAN_SOURCE_DIR) + "/bench/published/figures.csv");
  EXPECT_TRUE(in.good()) << "bench/published/figures.csv not found";
  return parse_table(in);
}

// The row's cluster cut to `gpus` GPUs.
DeviceGraph row_devices(const Row& row, int gpus) {
  ClusterSpec spec;
  spec.gpu = row[kGpu];
  spec.gpus_per_node = std::min(gpus, std::stoi(row[kGpusPerNode]));
  spec.nodes = gpus / spec.gpus_per_node;
  spec.precision = parse_precision(row[kPrecision]);
  spec.layout = parse_tensor_layout(row[kLayout]);
  if (spec.nodes > 1) {
    spec.fabric = parse_fabric(row[kFabric]);
    spec.inter_bandwidth_gbits = std::stod(row[kNicGbits]);
    spec.nics_per_node = std::stoi(row[kNicsPerNode]);
  }
  return build_device_graph(spec);
}

int64_t row_batch(const Row& row, int gpus) { return std::stoll(row[kBatchPerGpu]) * gpus; }
ModelGraph row_graph(const Row& row, int gpus) { return build_zoo_model(row[kModel], row_batch(row, gpus)); }

// The run's compute as its source measured it, for a row that publishes its throughput on
// base_gpus: each layer's data-parallel passes as the cost model prices them, all scaled by
// the one factor that makes the base step's passes last as long as that throughput says.
// Data parallelism keeps each GPU's tile the same at any GPU count, so the profile's
// entries hold at base_gpus and gpus alike. Null for "model": the cost model's compute.
std::shared_ptr<const DeviceProfile> measured_compute(const Row& row) {
  if (row[kBaseImgS] == "model") return nullptr;
  const int base = std::stoi(row[kBaseGpus]);
  const DeviceGraph devices = row_devices(row, base);
  const ModelGraph graph = row_graph(row, base);
  const CostModel model(graph, devices);
  const std::vector<Configuration> configs = data_parallel(graph, base);
  std::vector<PassTimes> modeled;
  double modeled_s = 0;
  for (const Layer& layer : graph.layers()) {
    modeled.push_back(model.pass_times(layer, configs[static_cast<size_t>(layer.id)]));
    modeled_s += modeled.back().forward_s + modeled.back().backward_s;
  }
  const double measured_s = static_cast<double>(row_batch(row, base)) / std::stod(row[kBaseImgS]);
  const double factor = measured_s / modeled_s;
  auto profile = std::make_shared<DeviceProfile>(devices.device().model, row[kPrecision], "figures.csv " + row[kId]);
  for (const Layer& layer : graph.layers()) {
    const Configuration& config = configs[static_cast<size_t>(layer.id)];
    const PassTimes& t = modeled[static_cast<size_t>(layer.id)];
    const TileShapes shapes = slowest_tile_shapes(graph, layer, config);
    ProfileEntry entry;
    entry.layer = layer;
    std::copy_n(shapes.begin(), kNumDims, entry.output.begin());
    for (size_t at = kNumDims; at + kNumDims <= shapes.size(); at += kNumDims) {
      auto& input = entry.inputs.emplace_back();
      std::copy_n(shapes.begin() + static_cast<std::ptrdiff_t>(at), kNumDims, input.begin());
    }
    entry.forward_s = t.forward_s * factor;
    entry.backward_s = t.backward_s * factor;
    profile->add(entry);
  }
  return profile;
}

// Images per second of the data-parallel step on `gpus` GPUs of the row's cluster.
double images_per_second(const Row& row, int gpus, const std::shared_ptr<const DeviceProfile>& compute) {
  const DeviceGraph devices = row_devices(row, gpus);
  const ModelGraph graph = row_graph(row, gpus);
  const CostModel model(graph, devices, SyncOptions{}, compute);
  const StrategyCost dp = price_strategy(model, "data parallel", data_parallel(graph, gpus));
  return static_cast<double>(row_batch(row, gpus)) / dp.step_s();
}

// The row's prediction, in the unit of its published figure.
double predict(const Row& row) {
  const int gpus = std::stoi(row[kGpus]);
  const std::shared_ptr<const DeviceProfile> compute = measured_compute(row);
  const double at_gpus = images_per_second(row, gpus, compute);
  if (row[kKind] == "throughput") return at_gpus;
  const int base = std::stoi(row[kBaseGpus]);
  return 100.0 * (at_gpus / gpus) / (images_per_second(row, base, compute) / base);
}

TEST(PublishedFigures, EveryRowIsWithinItsTolerance) {
  const Table table = read_table();
  for (const std::string& e : table.errors) ADD_FAILURE() << e;
  ASSERT_GE(table.rows.size(), 7u + 8u);
  std::printf("%-28s %-10s %10s %10s %8s\n", "row", "kind", "published", "predicted", "off");
  for (const Row& row : table.rows) {
    ASSERT_TRUE(row[kKind] == "throughput" || row[kKind] == "scaling") << "row " << row[kId] << ": kind " << row[kKind];
    const double published = std::stod(row[kPublished]);
    const double predicted = predict(row);
    const bool scaling = row[kKind] == "scaling";
    const double off = scaling ? predicted - published : 100.0 * (predicted / published - 1.0);
    std::printf("%-28s %-10s %10.1f %10.1f %+7.1f%s %s\n", row[kId].c_str(), row[kKind].c_str(), published, predicted,
                off, scaling ? " pt" : " %", row[kTolerance] == "report" ? "(reported)" : "");
    if (row[kTolerance] == "report") continue;
    const double tolerance = std::stod(row[kTolerance]);
    EXPECT_LE(std::abs(off), tolerance) << "row " << row[kId] << ": predicted " << predicted << ", published "
                                        << published << (scaling ? " %" : " img/s");
  }
}

TEST(PublishedFigures, AMissingFieldIsNamedWithItsRow) {
  std::istringstream text(
      "# comment\n"
      "id,kind,model,gpu,gpus,gpus_per_node,base_gpus,batch_per_gpu,precision,layout,fabric,nic_gbits,nics_per_node,"
      "published,base_img_s,tolerance,source\n"
      "full,scaling,vgg16,p100,8,4,1,64,fp32,nchw,rdma,25,1,68,model,5,a paper, with a comma\n"
      "no-batch,scaling,vgg16,p100,8,4,1,,fp32,nchw,rdma,25,1,68,model,5,a paper\n"
      "no-source,scaling,vgg16,p100,8,4,1,64,fp32,nchw,rdma,25,1,68,model,5\n");
  const Table table = parse_table(text);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][kSource], "a paper, with a comma");
  EXPECT_THAT(table.errors,
              testing::ElementsAre("row no-batch: missing field batch_per_gpu", "row no-source: missing field source"));
}

}  // namespace
}  // namespace layerplan
