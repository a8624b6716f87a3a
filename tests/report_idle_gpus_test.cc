// The HTML report of a plan that leaves GPUs idle and set a faster plan aside
// (tests/idle_plan_fixture.h): it says both under the title, and its strategy table lists
// every strategy once, the searched plan included, when a baseline-like plan is chosen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/plan_notes.h"
#include "report/report_page.h"
#include "tests/idle_plan_fixture.h"
#include "tests/report_xml.h"

namespace layerplan {
namespace {

using namespace testing_report;
using ::testing::HasSubstr;
using testing_idle::IdlePlan;

std::vector<std::string> strategy_rows(const XmlDoc& doc) {
  std::vector<std::string> out;
  for (const xmlNode* tr : find_all(doc, "tr")) {
    if (!attribute(tr, "data-strategy").empty()) out.push_back(attribute(tr, "data-strategy"));
  }
  return out;
}

TEST(ReportIdleGpus, ThePageSaysWhatIsIdleAndWhatWasSetAside) {
  const IdlePlan c;
  const XmlDoc doc = parse_xml(report::report_html({c.plan, c.graph, c.devices, {}, {}, {}}));
  const std::vector<const xmlNode*> idle = find_all(doc, "p", "idle");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(text_of(idle[0]), idle_devices_text(c.plan) + ".");
  EXPECT_THAT(text_of(idle[0]), HasSubstr("8 of 16 GPUs idle"));
  const std::vector<const xmlNode*> aside = find_all(doc, "p", "set-aside");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_THAT(text_of(aside[0]), HasSubstr("layer-wise on 1 node (8 GPUs)"));
  EXPECT_THAT(text_of(aside[0]), HasSubstr("simplicity margin"));
}

TEST(ReportIdleGpus, NothingIdleNothingSaid) {
  IdlePlan c;
  c.plan.idle_devices = 0;
  c.plan.set_aside_name.clear();
  const XmlDoc doc = parse_xml(report::report_html({c.plan, c.graph, c.devices, {}, {}, {}}));
  EXPECT_TRUE(find_all(doc, "p", "idle").empty());
  EXPECT_TRUE(find_all(doc, "p", "set-aside").empty());
}

// With data parallelism chosen, the table listed it twice and left the searched plan out.
TEST(ReportIdleGpus, TheNumbersListEveryStrategyOnce) {
  IdlePlan c;
  c.plan.chosen = c.plan.baselines.front();  // data parallel
  XmlDoc doc = parse_xml(report::report_html({c.plan, c.graph, c.devices, {}, {}, {}}));
  EXPECT_EQ(strategy_rows(doc), (std::vector<std::string>{"data parallel", "layer-wise", "model parallel", "owt"}));
  c.plan.chosen = c.plan.layer_wise;
  doc = parse_xml(report::report_html({c.plan, c.graph, c.devices, {}, {}, {}}));
  EXPECT_EQ(strategy_rows(doc), (std::vector<std::string>{"layer-wise", "data parallel", "model parallel", "owt"}));
  // A plan on the first node: itself, the searched plan, every baseline.
  c.plan = IdlePlan().plan;
  doc = parse_xml(report::report_html({c.plan, c.graph, c.devices, {}, {}, {}}));
  EXPECT_EQ(strategy_rows(doc), (std::vector<std::string>{"data parallel on 1 node (8 GPUs)", "layer-wise",
                                                          "data parallel", "model parallel", "owt"}));
}

}  // namespace
}  // namespace layerplan
