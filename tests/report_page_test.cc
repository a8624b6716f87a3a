// The HTML report read back as data (tests/report_xml.h parses it with libxml2): every
// layer once with its configuration, the grid's cells equal to the plan's tiles, the
// timelines' phases summing to each strategy's predicted step, a point per strategy and
// GPU count in the scaling chart, and the numbers of the text report in its tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "report/graph_layout.h"
#include "report/report_page.h"
#include "report/report_text.h"
#include "report/scaling.h"
#include "report/xml_writer.h"
#include "tests/report_xml.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using namespace testing_report;

struct PlannedCase {
  ModelGraph graph;
  DeviceGraph devices;
  Plan plan;
};

PlannedCase plan_case(const std::string& model, int gpus, int64_t per_gpu) {
  ClusterSpec spec = ClusterSpec::paper_cluster();
  spec.gpus_per_node = std::min(4, gpus);
  spec.nodes = gpus / spec.gpus_per_node;
  ModelGraph graph = build_zoo_model(model, per_gpu * gpus);
  DeviceGraph devices = build_device_graph(spec);
  Plan plan = make_plan(graph, devices);
  return {std::move(graph), std::move(devices), std::move(plan)};
}

// "3" -> {3}; "3-6" -> {3, 4, 5, 6}
std::vector<int> range_of(const std::string& text) {
  const size_t dash = text.find('-');
  const int first = std::stoi(text.substr(0, dash));
  const int last = dash == std::string::npos ? first : std::stoi(text.substr(dash + 1));
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

int id_of(const ModelGraph& graph, const std::string& name) {
  for (const Layer& l : graph.layers()) {
    if (l.name == name) return l.id;
  }
  throw std::invalid_argument("no layer " + name);
}

std::vector<int> comma_list(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = text.find(',', start);
    out.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

class ReportPageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vgg_ = new PlannedCase(plan_case("vgg16", 16, 8));
    report::ReportInput input{vgg_->plan, vgg_->graph, vgg_->devices, {}, "the text report", {}};
    report::ScalingCurve curve;
    curve.strategies = report::scaling_series_names();
    curve.job_gpus = 16;
    curve.points = {{4, {10, 10, 9, 8, 7}, false, "layer-wise"}, {16, {40, 40, 30, 20, 10}, true, "data parallel"}};
    input.scaling = curve;
    html_ = new std::string(report::report_html(input));
  }
  static void TearDownTestSuite() {
    delete vgg_;
    delete html_;
  }
  static PlannedCase* vgg_;
  static std::string* html_;
};
PlannedCase* ReportPageTest::vgg_ = nullptr;
std::string* ReportPageTest::html_ = nullptr;

TEST_F(ReportPageTest, IsOneSelfContainedWellFormedPage) {
  const XmlDoc doc = parse_xml(*html_);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(xmlDocGetRootElement(doc.get())->name)), "html");
  // Nothing fetched: no script, no link, no src or external href.
  EXPECT_TRUE(find_all(doc, "script").empty());
  EXPECT_TRUE(find_all(doc, "link").empty());
  for (const xmlNode* a : find_all(doc, "a")) EXPECT_EQ(attribute(a, "href").substr(0, 1), "#");
  EXPECT_TRUE(find_all(doc, "img").empty());
  EXPECT_EQ(find_all(doc, "style").size(), 1U);
  // Which layerplan wrote it.
  int versions = 0;
  for (const xmlNode* p : find_all(doc, "p")) {
    if (attribute(p, "class") != "version") continue;
    ++versions;
    EXPECT_EQ(text_of(p), "Written by " + version_line() + ".");
  }
  EXPECT_EQ(versions, 1);
}

TEST_F(ReportPageTest, EveryLayerAppearsOnceInTheGraphWithItsConfiguration) {
  const XmlDoc doc = parse_xml(*html_);
  std::map<std::string, const xmlNode*> seen;
  for (const xmlNode* g : find_all(doc, "g", "layer")) {
    const std::string name = attribute(g, "data-layer");
    EXPECT_TRUE(seen.emplace(name, g).second) << name << " drawn twice";
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(vgg_->graph.size()));
  for (const Layer& l : vgg_->graph.layers()) {
    ASSERT_TRUE(seen.count(l.name)) << l.name;
    const Configuration& c = vgg_->plan.chosen.layers[static_cast<size_t>(l.id)].config;
    EXPECT_EQ(attribute(seen[l.name], "data-config"), c.str());
    EXPECT_EQ(attribute(seen[l.name], "data-degrees"), c.degrees.str());
    EXPECT_EQ(comma_list(attribute(seen[l.name], "data-devices")), c.devices);
  }
}

TEST_F(ReportPageTest, GridCellsAreThePlansTiles) {
  const XmlDoc doc = parse_xml(*html_);
  const std::vector<const xmlNode*> rows = find_all(doc, "g", "row");
  ASSERT_EQ(rows.size(), static_cast<size_t>(vgg_->graph.size()));
  for (const xmlNode* row : rows) {
    const Layer& l = vgg_->graph.layer(id_of(vgg_->graph, attribute(row, "data-layer")));
    const Configuration& c = vgg_->plan.chosen.layers[static_cast<size_t>(l.id)].config;
    std::map<int, int> tile_of_device;
    for (const xmlNode* cell : children(row, "rect")) {
      const std::vector<int> devices = range_of(attribute(cell, "data-d"));
      const std::vector<int> tiles = range_of(attribute(cell, "data-t"));
      ASSERT_EQ(devices.size(), tiles.size());
      for (size_t i = 0; i < devices.size(); ++i) {
        EXPECT_TRUE(tile_of_device.emplace(devices[i], tiles[i]).second) << l.name << ": device drawn twice";
      }
    }
    ASSERT_EQ(tile_of_device.size(), static_cast<size_t>(c.tiles())) << l.name;
    for (int t = 0; t < c.tiles(); ++t) EXPECT_EQ(tile_of_device[c.devices[static_cast<size_t>(t)]], t) << l.name;
  }
}

// Each timeline's compute and moves add up to the strategy's forward and backward spans,
// its all-reduces to the buckets' sync time, and it is labelled with the predicted step.
TEST_F(ReportPageTest, TimelinePhasesAddUpToEachStrategysStep) {
  const XmlDoc doc = parse_xml(*html_);
  const std::vector<const xmlNode*> svgs = find_all(doc, "svg", "timelines");
  ASSERT_EQ(svgs.size(), 1U);
  std::map<std::string, const StrategyCost*> predicted{{vgg_->plan.chosen.name, &vgg_->plan.chosen}};
  if (!vgg_->plan.layer_wise.layers.empty()) predicted[vgg_->plan.layer_wise.name] = &vgg_->plan.layer_wise;
  for (const StrategyCost& b : vgg_->plan.baselines) predicted[b.name] = &b;
  const std::vector<const xmlNode*> timelines = find_all(svgs[0], "g", "timeline");
  ASSERT_EQ(timelines.size(), 4U);
  for (const xmlNode* t : timelines) {
    const std::string strategy = attribute(t, "data-strategy");
    ASSERT_TRUE(predicted.count(strategy)) << strategy;
    const StrategyCost& s = *predicted[strategy];
    EXPECT_NEAR(std::stod(attribute(t, "data-step-s")), s.step_s(), 1e-7 * s.step_s()) << strategy;
    double path = 0, sync = 0;
    for (const xmlNode* rect : children(t, "rect")) {
      const std::string cls = attribute(rect, "class");
      ASSERT_EQ(cls.substr(0, 6), "phase ");
      (cls.rfind("phase all-reduces", 0) == 0 ? sync : path) += std::stod(attribute(rect, "data-s"));
    }
    // The backward's phases stretch where all-reduces slow it, within the exposed sync.
    EXPECT_GE(path, s.timeline.forward_s + s.timeline.backward_s - 1e-7 * s.step_s()) << strategy;
    EXPECT_LE(path, s.timeline.forward_s + s.timeline.backward_s + s.timeline.exposed_sync_s + 1e-7 * s.step_s())
        << strategy;
    EXPECT_NEAR(sync, s.timeline.sync_s, 1e-7 * s.step_s()) << strategy;
    // Every device in exactly one row, and no row's spans beyond the step.
    std::set<int> devices;
    for (const xmlNode* row : children(t, "g")) {
      if (attribute(row, "class") != "devices") continue;
      for (const int d : comma_list(attribute(row, "data-devices"))) EXPECT_TRUE(devices.insert(d).second);
    }
    EXPECT_EQ(devices.size(), 16U) << strategy;
  }
}

// VGG-16's model parallelism takes about 40 times the chosen plan's step: on one scale every
// other strategy was a sliver. Each is drawn to its own: its phases span the whole axis,
// and its axis says how many milliseconds that is.
TEST_F(ReportPageTest, EachTimelineIsDrawnToItsOwnScale) {
  const XmlDoc doc = parse_xml(*html_);
  double longest = 0;
  for (const StrategyCost& b : vgg_->plan.baselines) longest = std::max(longest, b.step_s());
  ASSERT_GT(longest, 20 * vgg_->plan.chosen.step_s());  // the case the scale is for
  std::vector<double> widths;
  for (const xmlNode* t : find_all(doc, "g", "timeline")) {
    const std::string strategy = attribute(t, "data-strategy");
    double left = 1e9, right = 0;
    for (const xmlNode* rect : children(t, "rect")) {
      const double x = std::stod(attribute(rect, "x"));
      left = std::min(left, x);
      right = std::max(right, x + std::stod(attribute(rect, "width")));
    }
    const std::vector<const xmlNode*> axes = find_all(t, "g", "axis");
    ASSERT_EQ(axes.size(), 1U) << strategy;
    const double ms_per_px = std::stod(attribute(axes[0], "data-ms-per-px"));
    const double step_ms = std::stod(attribute(t, "data-step-s")) * 1e3;
    EXPECT_NEAR((right - left) * ms_per_px, step_ms, 0.3 * ms_per_px) << strategy;
    widths.push_back(right - left);
    // The axis is labelled in this strategy's milliseconds, up to its step, which ends it.
    const std::vector<const xmlNode*> ticks = find_all(axes[0], "text", "tick");
    ASSERT_GE(ticks.size(), 3U) << strategy;
    EXPECT_LE(std::stod(text_of(ticks.back())), step_ms) << strategy;
    EXPECT_GT(std::stod(text_of(ticks.back())), step_ms / 2) << strategy;
    const std::vector<const xmlNode*> end = find_all(axes[0], "text", "end");
    ASSERT_EQ(end.size(), 1U);
    EXPECT_EQ(text_of(end[0]), report::milliseconds(step_ms / 1e3) + " ms");
    EXPECT_NE(text_of(find_all(t, "text", "strategy").at(0)).find("own scale"), std::string::npos);
  }
  ASSERT_EQ(widths.size(), 4U);
  for (const double w : widths) EXPECT_NEAR(w, widths.front(), 0.5);  // all the same length
  EXPECT_GT(widths.front(), 900);
  // And the page says so.
  bool said = false;
  for (const xmlNode* p : find_all(doc, "p", "note"))
    said = said || text_of(p).find("its own time scale") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(ReportPageTest, ScalingChartHasAPointPerSeriesAndCount) {
  const XmlDoc doc = parse_xml(*html_);
  // Series -> its points, in GPU order.
  std::map<std::string, std::vector<const xmlNode*>> points;
  for (const xmlNode* c : find_all(doc, "circle", "point")) points[attribute(c, "data-strategy")].push_back(c);
  ASSERT_EQ(points.size(), 5U);
  for (const std::string& s : report::scaling_series_names()) ASSERT_EQ(points[s].size(), 2U) << s;
  const xmlNode* search = points["layer-wise search"][1];
  EXPECT_EQ(attribute(search, "data-gpus"), "16");
  EXPECT_EQ(std::stod(attribute(search, "data-images-per-s")), 40);
  EXPECT_EQ(attribute(search, "fill"), "#ffffff");                    // no searched plan: hollow
  EXPECT_NE(attribute(points["chosen plan"][1], "fill"), "#ffffff");  // the chosen plan is what it is
  EXPECT_NE(text_of(points["chosen plan"][1]).find("chosen plan (data parallel) on 16 GPUs"), std::string::npos);
  EXPECT_EQ(std::stod(attribute(points["data parallel"][0], "data-images-per-s")), 9);
  // The search's line is drawn last, on top of a baseline equal to it.
  EXPECT_EQ(find_all(doc, "circle", "point").back(), search);
}

// Every word of the strategy table and every baseline's name is in the glossary, which
// the navigation links to.
TEST_F(ReportPageTest, TheGlossaryExplainsThePagesWords) {
  const XmlDoc doc = parse_xml(*html_);
  const std::vector<const xmlNode*> lists = find_all(doc, "dl", "glossary");
  ASSERT_EQ(lists.size(), 1U);
  std::set<std::string> terms;
  const std::vector<const xmlNode*> dt = children(lists[0], "dt");
  const std::vector<const xmlNode*> dd = children(lists[0], "dd");
  ASSERT_EQ(dt.size(), dd.size());
  for (size_t i = 0; i < dt.size(); ++i) {
    terms.insert(attribute(dt[i], "data-term"));
    EXPECT_EQ(text_of(dt[i]), attribute(dt[i], "data-term"));
    EXPECT_GT(text_of(dd[i]).size(), 20U) << text_of(dt[i]);
  }
  std::vector<std::string> words;
  for (const xmlNode* th : find_all(find_all(doc, "table", "strategies").at(0), "th")) {
    std::string word = text_of(th);
    if (word.size() > 3 && word.substr(word.size() - 3) == " ms") word.resize(word.size() - 3);
    if (word != "strategy" && word != "images/s") words.push_back(word);
  }
  for (const StrategyCost& b : vgg_->plan.baselines) words.push_back(b.name);
  for (const std::string w : {"additive", "exposed", "owt", "sync", "chosen plan", "configuration", "hollow point"}) {
    words.push_back(w);
  }
  for (const std::string& w : words) EXPECT_TRUE(terms.count(w)) << "no glossary entry for " << w;
  bool linked = false;
  for (const xmlNode* a : find_all(doc, "a")) linked = linked || attribute(a, "href") == "#glossary";
  EXPECT_TRUE(linked);
}

TEST_F(ReportPageTest, TablesHoldTheTextReportsNumbers) {
  const XmlDoc doc = parse_xml(*html_);
  std::vector<std::string> strategies;
  for (const xmlNode* tr : find_all(doc, "tr")) {
    if (!attribute(tr, "data-strategy").empty()) strategies.push_back(attribute(tr, "data-strategy"));
  }
  EXPECT_EQ(strategies, (std::vector<std::string>{"layer-wise", "data parallel", "model parallel", "owt"}));
  // The searched plan was chosen: nothing shown twice.
  for (const xmlNode* s : find_all(doc, "section")) EXPECT_NE(attribute(s, "id"), "searched");
  EXPECT_TRUE(find_all(doc, "p", "searched").empty());
  int layer_rows = 0;
  for (const xmlNode* tr : find_all(doc, "tr")) {
    const std::string name = attribute(tr, "data-layer");
    if (name.empty()) continue;
    ++layer_rows;
    const std::vector<const xmlNode*> cells = children(tr, "td");
    ASSERT_GE(cells.size(), 5U);
    const LayerCost& cost = vgg_->plan.chosen.layers[static_cast<size_t>(id_of(vgg_->graph, name))];
    EXPECT_EQ(text_of(cells[3]), cost.config.str());
    EXPECT_NEAR(std::stod(text_of(cells[4])), cost.compute_s * 1e3, 5e-4);
  }
  EXPECT_EQ(layer_rows, vgg_->graph.size());
  const std::vector<const xmlNode*> pre = find_all(doc, "pre");
  ASSERT_EQ(pre.size(), 1U);
  EXPECT_EQ(text_of(pre[0]), "the text report");
}

TEST(ReportXml, EscapesTextAndRefusesUnclosedElements) {
  report::XmlWriter xml;
  xml.open("p", {{"title", "a \"b\" & <c>"}});
  xml.text("x < y && z > \"w\"");
  xml.close();
  const std::string text = xml.finish();
  const XmlDoc doc = parse_xml(text);
  const std::vector<const xmlNode*> p = find_all(doc, "p");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_EQ(attribute(p[0], "title"), "a \"b\" & <c>");
  EXPECT_EQ(text_of(p[0]), "x < y && z > \"w\"");
  report::XmlWriter unclosed;
  unclosed.open("p");
  EXPECT_THROW(unclosed.finish(), std::logic_error);
  EXPECT_THROW(parse_xml("<p><b></p>"), std::runtime_error);  // the parser does refuse bad markup
}

TEST(ReportLayout, InceptionBranchesStandSideBySide) {
  const ModelGraph graph = build_zoo_model("inception_v3", 8);
  const report::GraphLayout layout = report::layout_graph(graph);
  EXPECT_GE(layout.columns, 4);
  for (const Layer& l : graph.layers()) {
    const auto i = static_cast<size_t>(l.id);
    for (const int input : l.inputs) EXPECT_LT(layout.row[static_cast<size_t>(input)], layout.row[i]);
    if (l.kind != LayerKind::kConcat) continue;
    // A concat's producers are the ends of its branches: in distinct places.
    std::set<std::pair<int, int>> places;
    for (const int input : l.inputs) {
      places.insert({layout.row[static_cast<size_t>(input)], layout.column[static_cast<size_t>(input)]});
    }
    EXPECT_EQ(places.size(), l.inputs.size()) << l.name;
  }
}

TEST(ReportScaling, CountsRunFromOneNodePastTheJob) {
  EXPECT_EQ(report::scaling_gpu_counts(4, 16), (std::vector<int>{4, 8, 16, 32}));
  EXPECT_EQ(report::scaling_gpu_counts(4, 12), (std::vector<int>{4, 8, 12, 16, 32}));
  EXPECT_EQ(report::scaling_gpu_counts(8, 64), (std::vector<int>{8, 16, 32, 64, 128}));
}

}  // namespace
}  // namespace layerplan
