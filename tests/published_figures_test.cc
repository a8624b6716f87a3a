// The cost model against published measurements (bench/published/figures.csv): every row is
// priced as the run that produced it trained, data parallel on its cluster, and its predicted
// throughput or scaling efficiency must fall within the row's tolerance of the published
// figure. Rows marked "report" are printed (docs/cost-model.md lists them) but not asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/zoo.h"
#include "planner/planner.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

constexpr size_t kFieldCount = 15;
constexpr std::array<const char*, kFieldCount> kFields = {
    "id",        "kind",   "model",     "gpu",           "gpus",      "gpus_per_node", "base_gpus", "batch_per_gpu",
    "precision", "fabric", "nic_gbits", "nics_per_node", "published", "tolerance",     "source"};

using Row = std::vector<std::string>;  // kFieldCount fields, in kFields' order

struct Table {
  std::vector<Row> rows;
  std::vector<std::string> errors;  // "row ID: missing field NAME"
};

// Reads the CSV: '#' lines are comments, the first other line the header. The source, the
// last field, is the rest of the line (it may hold commas).
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
    Row row;
    size_t at = 0;
    while (at != std::string::npos && row.size() + 1 < kFieldCount) {
      const size_t comma = line.find(',', at);
      row.push_back(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      at = comma == std::string::npos ? std::string::npos : comma + 1;
    }
    if (at != std::string::npos) row.push_back(line.substr(at));
    const std::string id = row.empty() || row[0].empty() ? "at line '" + line + "'" : row[0];
    bool complete = true;
    for (size_t f = 0; f < kFieldCount; ++f) {
      if (f >= row.size() || row[f].empty()) {
        table.errors.push_back("row " + id + ": missing field " + kFields[f]);
        complete = false;
      }
    }
    if (complete) table.rows.push_back(row);
  }
  return table;
}

Table read_table() {
  std::ifstream in(std::string(LAYERPLAN_SOURCE_DIR) + "/bench/published/figures.csv");
  EXPECT_TRUE(in.good()) << "bench/published/figures.csv not found";
  return parse_table(in);
}

// Images per second of the data-parallel step on `gpus` GPUs of the row's cluster.
double images_per_second(const Row& row, int gpus) {
  ClusterSpec spec;
  spec.gpu = row[3];
  spec.gpus_per_node = std::min(gpus, std::stoi(row[5]));
  spec.nodes = gpus / spec.gpus_per_node;
  spec.precision = parse_precision(row[8]);
  if (spec.nodes > 1) {
    spec.fabric = parse_fabric(row[9]);
    spec.inter_bandwidth_gbits = std::stod(row[10]);
    spec.nics_per_node = std::stoi(row[11]);
  }
  const DeviceGraph devices = build_device_graph(spec);
  const int64_t batch = std::stoll(row[7]) * gpus;
  const ModelGraph graph = build_zoo_model(row[2], batch);
  const CostModel model(graph, devices);
  const StrategyCost dp = price_strategy(model, "data parallel", data_parallel(graph, gpus));
  return static_cast<double>(batch) / dp.step_s();
}

// The row's prediction, in the unit of its published figure.
double predict(const Row& row) {
  const int gpus = std::stoi(row[4]);
  const double at_gpus = images_per_second(row, gpus);
  if (row[1] == "throughput") return at_gpus;
  const int base = std::stoi(row[6]);
  return 100.0 * (at_gpus / gpus) / (images_per_second(row, base) / base);
}

TEST(PublishedFigures, EveryRowIsWithinItsTolerance) {
  const Table table = read_table();
  for (const std::string& e : table.errors) ADD_FAILURE() << e;
  ASSERT_GE(table.rows.size(), 7u + 8u);
  std::printf("%-28s %-10s %10s %10s %8s\n", "row", "kind", "published", "predicted", "off");
  for (const Row& row : table.rows) {
    ASSERT_TRUE(row[1] == "throughput" || row[1] == "scaling") << "row " << row[0] << ": kind " << row[1];
    const double published = std::stod(row[12]);
    const double predicted = predict(row);
    const bool scaling = row[1] == "scaling";
    const double off = scaling ? predicted - published : 100.0 * (predicted / published - 1.0);
    std::printf("%-28s %-10s %10.1f %10.1f %+7.1f%s %s\n", row[0].c_str(), row[1].c_str(), published, predicted, off,
                scaling ? " pt" : " %", row[13] == "report" ? "(reported)" : "");
    if (row[13] == "report") continue;
    const double tolerance = std::stod(row[13]);
    EXPECT_LE(std::abs(off), tolerance) << "row " << row[0] << ": predicted " << predicted << ", published "
                                        << published << (scaling ? " %" : " img/s");
  }
}

TEST(PublishedFigures, AMissingFieldIsNamedWithItsRow) {
  std::istringstream text(
      "# comment\n"
      "id,kind,model,gpu,gpus,gpus_per_node,base_gpus,batch_per_gpu,precision,fabric,nic_gbits,nics_per_node,"
      "published,tolerance,source\n"
      "full,scaling,vgg16,p100,8,4,1,64,fp32,rdma,25,1,68,5,a paper, with a comma\n"
      "no-batch,scaling,vgg16,p100,8,4,1,,fp32,rdma,25,1,68,5,a paper\n"
      "no-source,scaling,vgg16,p100,8,4,1,64,fp32,rdma,25,1,68,5\n");
  const Table table = parse_table(text);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][14], "a paper, with a comma");
  EXPECT_THAT(table.errors,
              testing::ElementsAre("row no-batch: missing field batch_per_gpu", "row no-source: missing field source"));
}

}  // namespace
}  // namespace layerplan
