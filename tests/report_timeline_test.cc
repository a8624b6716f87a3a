// The step timeline's SVG (report/timeline_svg.h) for a step of many layers each far
// narrower than a pixel: consecutive tiny phases are drawn as one rectangle per 2 px at
// most, titled with how many layers and phases it covers, and the strip still adds up to
// the step; a phase wide enough to hover keeps its own rectangle and per-layer title.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "model/zoo.h"
#include "report/step_timeline.h"
#include "report/timeline_svg.h"
#include "report/xml_writer.h"
#include "tests/report_xml.h"

namespace layerplan {
namespace {

using testing_report::attribute;
using testing_report::children;
using testing_report::find_all;
using testing_report::parse_xml;
using testing_report::text_of;

constexpr int kTiny = 1000;

// One wide compute phase (800 px of the 1,000-px axis), then kTiny phases of alternating
// compute and moves (so that no two in a row are of one kind), 0.2 px each.
report::StepTimeline many_tiny_layers(const ModelGraph& graph) {
  report::StepTimeline t;
  t.strategy = "many tiny layers";
  t.device_count = 2;
  double start = 0;
  auto add = [&](int layer, report::StepPhase kind, double seconds) {
    report::TimelinePhase p;
    p.layer = layer % graph.size();
    p.kind = kind;
    p.start_s = start;
    p.duration_s = seconds;
    p.bytes = kind == report::StepPhase::kTransfer ? 1000 : 0;
    p.devices = {0, 1};
    t.phases.push_back(p);
    start += seconds;
  };
  add(0, report::StepPhase::kCompute, 1.0);
  for (int i = 0; i < kTiny; ++i) {
    add(1 + i, i % 2 == 0 ? report::StepPhase::kTransfer : report::StepPhase::kCompute, 0.25 / kTiny);
  }
  t.step_s = start;
  return t;
}

// The "N phases" of a merged rectangle's title ("a .. b: 3 layers, 4 phases: compute ...").
int phases_in_title(const std::string& title) {
  const size_t open = title.find(" layers, ");
  const size_t close = title.find(" phases: ");
  if (open == std::string::npos || close == std::string::npos) return 0;
  return std::stoi(title.substr(open + 9, close - open - 9));
}

TEST(ReportTimelineTest, LayersTooNarrowToHoverAreMergedIntoOneRectangle) {
  const ModelGraph graph = build_zoo_model("vgg16", 1);
  const report::StepTimeline t = many_tiny_layers(graph);
  report::XmlWriter xml;
  report::write_timelines(xml, graph, {t});
  const testing_report::XmlDoc doc = parse_xml(xml.finish());
  const std::vector<const xmlNode*> timelines = find_all(doc, "g", "timeline");
  ASSERT_EQ(timelines.size(), 1U);
  std::vector<const xmlNode*> rows = {timelines[0]};
  for (const xmlNode* g : find_all(timelines[0], "g", "devices")) rows.push_back(g);
  ASSERT_EQ(rows.size(), 2U);  // the strip of the path and the one row of both devices
  for (const xmlNode* row : rows) {
    const std::vector<const xmlNode*> rects = children(row, "rect");
    // The tiny phases' 200 px in rectangles of at least 3 phases (at most 2 px each): far
    // fewer rectangles than phases (one each before).
    ASSERT_GE(rects.size(), 2U);
    EXPECT_LE(rects.size(), static_cast<size_t>(1 + kTiny / 3));
    // The wide phase is its own, with its layer's name.
    EXPECT_EQ(attribute(rects[0], "class").find("merged"), std::string::npos);
    EXPECT_EQ(text_of(find_all(rects[0], "title").at(0)).rfind(graph.layer(0).name + ": compute, ", 0), 0U);
    double seconds = 0;
    int phases = 1;
    for (size_t i = 1; i < rects.size(); ++i) {
      const std::string cls = attribute(rects[i], "class");
      const std::string title = text_of(find_all(rects[i], "title").at(0));
      if (row == timelines[0]) seconds += std::stod(attribute(rects[i], "data-s"));
      if (cls.find(" merged") == std::string::npos) {
        ++phases;
        continue;
      }
      EXPECT_LE(std::stod(attribute(rects[i], "width")), 2.0) << title;
      EXPECT_GE(phases_in_title(title), 2) << title;
      EXPECT_NE(title.find(": compute "), std::string::npos) << title;
      EXPECT_NE(title.find(", transfer "), std::string::npos) << title;
      phases += phases_in_title(title);
    }
    EXPECT_EQ(phases, 1 + kTiny);  // every tiny phase in exactly one rectangle
    // The strip's seconds add up to the step (a device row's spans are the strip's phases).
    if (row == timelines[0]) {
      EXPECT_NEAR(seconds + std::stod(attribute(rects[0], "data-s")), t.step_s, 1e-9);
    }
  }
}

}  // namespace
}  // namespace layerplan
