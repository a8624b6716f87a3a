// The HTML report of a plan whose chosen strategy is a baseline, as make_plan() makes it:
// ResNet-50 at 32 images per GPU on one node of 4 H100 (`layerplan plan --model resnet50
// --gpus 4 --gpu h100`), where the searched plan is about 0.1 % faster than data
// parallelism, within the simplicity margin, so data parallelism is chosen. Every strategy
// is in the table once with its own numbers, the searched plan is shown beside the chosen
// one, and the scaling chart names its series for what they are.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/zoo.h"
#include "planner/planner.h"
#include "report/report_page.h"
#include "report/scaling.h"
#include "tests/report_xml.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using namespace testing_report;
using ::testing::HasSubstr;

ClusterSpec one_h100_node() {
  ClusterSpec spec = ClusterSpec::paper_cluster();
  spec.nodes = 1;
  spec.gpus_per_node = 4;
  spec.gpu = "h100";
  return spec;
}

class ReportChosenBaseline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    graph_ = new ModelGraph(build_zoo_model("resnet50", 32 * 4));
    devices_ = new DeviceGraph(build_device_graph(one_h100_node()));
    plan_ = new Plan(make_plan(*graph_, *devices_));
    report::ReportInput input{*plan_, *graph_, *devices_, {}, "the text report", {}};
    // The job's own count only: its point is the plan itself.
    input.scaling = report::scaling_curve([](int) -> std::optional<report::ScalingCase> { return std::nullopt; }, {4},
                                          4, PlanOptions{}, plan_);
    html_ = new std::string(report::report_html(input));
  }
  static void TearDownTestSuite() {
    delete html_;
    delete plan_;
    delete devices_;
    delete graph_;
  }
  void SetUp() override {
    // What this file is about: a baseline chosen over a different searched plan.
    ASSERT_EQ(plan_->chosen.name, "data parallel");
    ASSERT_EQ(plan_->layer_wise.name, "layer-wise");
    ASSERT_EQ(plan_->layer_wise.layers.size(), static_cast<size_t>(graph_->size()));
  }
  static ModelGraph* graph_;
  static DeviceGraph* devices_;
  static Plan* plan_;
  static std::string* html_;
};
ModelGraph* ReportChosenBaseline::graph_ = nullptr;
DeviceGraph* ReportChosenBaseline::devices_ = nullptr;
Plan* ReportChosenBaseline::plan_ = nullptr;
std::string* ReportChosenBaseline::html_ = nullptr;

// A number the page printed with `decimals` decimals, within its rounding.
void expect_printed(const std::string& text, double value, int decimals, const std::string& what) {
  double tolerance = 0.5;
  for (int i = 0; i < decimals; ++i) tolerance /= 10;
  EXPECT_NEAR(std::stod(text), value, tolerance * 1.0001) << what << ": " << text;
}

// The user saw data parallel twice and no layer-wise row.
TEST_F(ReportChosenBaseline, TheStrategyTableListsEveryStrategyOnceWithItsNumbers) {
  const XmlDoc doc = parse_xml(*html_);
  const std::vector<const xmlNode*> tables = find_all(doc, "table", "strategies");
  ASSERT_EQ(tables.size(), 1U);
  const Plan& plan = *plan_;
  const std::vector<const StrategyCost*> expected = {&plan.chosen, &plan.layer_wise, &plan.baselines[1],
                                                     &plan.baselines[2]};
  const std::vector<std::string> labels = {"data parallel (chosen)", "layer-wise (searched)", "model parallel", "owt"};
  std::vector<const xmlNode*> rows;
  for (const xmlNode* tr : children(tables[0], "tr")) {
    if (!attribute(tr, "data-strategy").empty()) rows.push_back(tr);
  }
  ASSERT_EQ(rows.size(), expected.size());
  const double data_parallel = plan.baselines[0].step_s();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StrategyCost& s = *expected[i];
    EXPECT_EQ(attribute(rows[i], "data-strategy"), s.name);
    const std::vector<const xmlNode*> cells = children(rows[i], "td");
    ASSERT_EQ(cells.size(), 10U);
    EXPECT_EQ(text_of(cells[0]), labels[i]);
    expect_printed(text_of(cells[1]), s.step_s() * 1e3, 2, s.name + " step");
    expect_printed(text_of(cells[2]), s.additive_s() * 1e3, 2, s.name + " additive");
    expect_printed(text_of(cells[3]), static_cast<double>(plan.batch) / s.step_s(), 1, s.name + " images/s");
    expect_printed(text_of(cells[4]), data_parallel / s.step_s(), 2, s.name + " speedup");
    expect_printed(text_of(cells[5]), s.compute_s * 1e3, 2, s.name + " compute");
    expect_printed(text_of(cells[6]), s.transfer_s * 1e3, 2, s.name + " transfer");
    expect_printed(text_of(cells[7]), s.timeline.sync_s * 1e3, 2, s.name + " sync");
    expect_printed(text_of(cells[8]), s.timeline.exposed_sync_s * 1e3, 2, s.name + " exposed");
    expect_printed(text_of(cells[9]), static_cast<double>(s.communication_bytes()) / 1e6, 1, s.name + " comm");
  }
  EXPECT_EQ(attribute(rows[0], "data-role"), "chosen");
  EXPECT_EQ(attribute(rows[1], "data-role"), "searched");
}

// The searched plan beside the chosen one: its step, the layers it splits otherwise, its
// grid and its layers.
TEST_F(ReportChosenBaseline, TheSearchedPlanIsShown) {
  const XmlDoc doc = parse_xml(*html_);
  const StrategyCost& searched = plan_->layer_wise;
  std::vector<const xmlNode*> section;
  for (const xmlNode* s : find_all(doc, "section")) {
    if (attribute(s, "id") == "searched") section.push_back(s);
  }
  ASSERT_EQ(section.size(), 1U);
  EXPECT_EQ(attribute(section[0], "data-strategy"), searched.name);
  EXPECT_NEAR(std::stod(attribute(section[0], "data-step-s")), searched.step_s(), 1e-9 * searched.step_s());
  const std::vector<const xmlNode*> intro = find_all(doc, "p", "searched");
  ASSERT_EQ(intro.size(), 1U);
  char step[32];
  std::snprintf(step, sizeof step, "%.2f ms per step", searched.step_s() * 1e3);
  EXPECT_THAT(text_of(intro[0]), HasSubstr(step));
  // The layers split otherwise than in the chosen plan, each with both configurations.
  std::set<std::string> differ;
  for (const Layer& l : graph_->layers()) {
    const auto id = static_cast<size_t>(l.id);
    if (!(plan_->chosen.layers[id].config == searched.layers[id].config)) differ.insert(l.name);
  }
  ASSERT_FALSE(differ.empty());
  std::set<std::string> listed;
  for (const xmlNode* tr : find_all(section[0], "tr")) {
    if (attribute(tr, "data-layer").empty() || find_all(tr, "td").size() != 3) continue;
    const std::vector<const xmlNode*> cells = children(tr, "td");
    const Layer& l = [&]() -> const Layer& {
      for (const Layer& x : graph_->layers()) {
        if (x.name == attribute(tr, "data-layer")) return x;
      }
      throw std::runtime_error("no layer " + attribute(tr, "data-layer"));
    }();
    EXPECT_EQ(text_of(cells[1]), plan_->chosen.layers[static_cast<size_t>(l.id)].config.str());
    EXPECT_EQ(text_of(cells[2]), searched.layers[static_cast<size_t>(l.id)].config.str());
    listed.insert(l.name);
  }
  EXPECT_EQ(listed, differ);
  // Its device grid: a row per layer with a cell per tile of the searched configuration.
  const std::vector<const xmlNode*> grid_rows = find_all(section[0], "g", "row");
  ASSERT_EQ(grid_rows.size(), static_cast<size_t>(graph_->size()));
  for (size_t i = 0; i < grid_rows.size(); ++i) {
    EXPECT_EQ(attribute(grid_rows[i], "data-layer"), graph_->layer(static_cast<int>(i)).name);
    const Configuration& config = searched.layers[i].config;
    const std::vector<const xmlNode*> cells = children(grid_rows[i], "rect");
    ASSERT_EQ(cells.size(), static_cast<size_t>(config.tiles()));
    for (const xmlNode* cell : cells) {
      EXPECT_EQ(std::stoi(attribute(cell, "data-d")), config.devices[std::stoul(attribute(cell, "data-t"))]);
    }
  }
  // Its per-layer table.
  const std::vector<const xmlNode*> tables = find_all(section[0], "table", "layers searched");
  ASSERT_EQ(tables.size(), 1U);
  const std::vector<const xmlNode*> rows = children(tables[0], "tr");
  ASSERT_EQ(rows.size(), static_cast<size_t>(graph_->size()) + 1);  // and the header
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(text_of(children(rows[i], "td")[3]), searched.layers[i - 1].config.str());
  }
}

// The timelines: one per row of the table, in its order.
TEST_F(ReportChosenBaseline, ATimelinePerStrategyOnce) {
  const XmlDoc doc = parse_xml(*html_);
  std::vector<std::string> names;
  for (const xmlNode* t : find_all(doc, "g", "timeline")) names.push_back(attribute(t, "data-strategy"));
  EXPECT_EQ(names, (std::vector<std::string>{"data parallel", "layer-wise", "model parallel", "owt"}));
}

// The chart's first series was called "layer-wise" but drew the chosen plan.
TEST_F(ReportChosenBaseline, TheScalingSeriesAreNamedForWhatTheyAre) {
  const XmlDoc doc = parse_xml(*html_);
  // One point per series (one GPU count), looked up by its name.
  std::map<std::string, const xmlNode*> circle;
  for (const xmlNode* c : find_all(doc, "circle", "point")) circle[attribute(c, "data-strategy")] = c;
  EXPECT_EQ(circle.size(), 5U);
  std::vector<double> rates;
  for (const std::string& s : report::scaling_series_names()) {
    ASSERT_TRUE(circle.count(s)) << s;
    rates.push_back(std::stod(attribute(circle[s], "data-images-per-s")));
  }
  EXPECT_EQ(report::scaling_series_names(),
            (std::vector<std::string>{"chosen plan", "layer-wise search", "data parallel", "model parallel", "owt"}));
  const auto rate = [&](const StrategyCost& s) { return static_cast<double>(plan_->batch) / s.step_s(); };
  EXPECT_NEAR(rates[0], rate(plan_->chosen), 1e-5 * rates[0]);
  EXPECT_NEAR(rates[1], rate(plan_->layer_wise), 1e-5 * rates[1]);
  EXPECT_NE(rates[0], rates[1]);
  for (size_t b = 0; b < 3; ++b) EXPECT_NEAR(rates[2 + b], rate(plan_->baselines[b]), 1e-5 * rates[2 + b]);
  // The chosen plan's point and the table name what was chosen.
  EXPECT_THAT(text_of(circle["chosen plan"]), HasSubstr("chosen plan (data parallel) on 4 GPUs"));
  const std::vector<const xmlNode*> table = find_all(doc, "table", "scaling");
  ASSERT_EQ(table.size(), 1U);
  const std::vector<const xmlNode*> rows = children(table[0], "tr");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(text_of(children(rows[0], "th")[1]), "chosen");
  EXPECT_EQ(text_of(children(rows[1], "td")[1]), "data parallel");
}

// The search may find data parallelism itself ("data parallel on every layer"): listed as
// searched, but its grid, layers and timeline are not drawn twice.
TEST_F(ReportChosenBaseline, ASearchedPlanSplitAsTheChosenIsNotDrawnTwice) {
  Plan plan = *plan_;
  plan.layer_wise = plan.chosen;
  plan.layer_wise.name = "data parallel on every layer";
  const XmlDoc doc = parse_xml(report::report_html({plan, *graph_, *devices_, {}, {}, {}}));
  std::vector<std::string> rows, timelines;
  for (const xmlNode* tr : find_all(doc, "tr")) {
    if (!attribute(tr, "data-strategy").empty()) rows.push_back(attribute(tr, "data-strategy"));
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"data parallel", "data parallel on every layer", "model parallel", "owt"}));
  for (const xmlNode* t : find_all(doc, "g", "timeline")) timelines.push_back(attribute(t, "data-strategy"));
  EXPECT_EQ(timelines, (std::vector<std::string>{"data parallel", "model parallel", "owt"}));
  const xmlNode* section = nullptr;
  for (const xmlNode* s : find_all(doc, "section")) {
    if (attribute(s, "id") == "searched") section = s;
  }
  ASSERT_NE(section, nullptr);
  const std::vector<const xmlNode*> count = find_all(section, "p", "differences");
  ASSERT_EQ(count.size(), 1U);
  EXPECT_EQ(text_of(count[0]),
            "0 of " + std::to_string(graph_->size()) + " layers split otherwise than in data parallel.");
  EXPECT_TRUE(find_all(section, "g", "row").empty());
  EXPECT_TRUE(find_all(section, "table").empty());
}

// A plan without a searched plan (a plan file re-priced by `layerplan report`, or a search
// that fell back): the chosen plan stands in for the search, drawn hollow.
TEST_F(ReportChosenBaseline, WithoutASearchedPlanTheChosenStandsInHollow) {
  Plan plan = *plan_;
  plan.layer_wise = StrategyCost{};
  const report::ScalingCurve curve = report::scaling_curve(
      [](int) -> std::optional<report::ScalingCase> { return std::nullopt; }, {4}, 4, PlanOptions{}, &plan);
  ASSERT_EQ(curve.points.size(), 1U);
  const report::ScalingPoint& p = curve.points[0];
  EXPECT_TRUE(p.layerwise_fell_back);
  EXPECT_EQ(p.images_per_s[report::kSearchSeries], p.images_per_s[report::kChosenSeries]);
  const XmlDoc doc = parse_xml(report::report_html({plan, *graph_, *devices_, curve, {}, {}}));
  std::map<std::string, const xmlNode*> circle;
  for (const xmlNode* c : find_all(doc, "circle", "point")) circle[attribute(c, "data-strategy")] = c;
  ASSERT_EQ(circle.size(), 5U);
  EXPECT_EQ(attribute(circle.at("layer-wise search"), "fill"), "#ffffff");
  EXPECT_NE(attribute(circle.at("chosen plan"), "fill"), "#ffffff");
  for (const xmlNode* s : find_all(doc, "section")) EXPECT_NE(attribute(s, "id"), "searched");
}

}  // namespace
}  // namespace layerplan
