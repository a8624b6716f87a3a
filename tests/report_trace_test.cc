// `layerplan plan --trace`'s file (report/plan_trace.h, common/trace_events.h) against the
// trace event format (tests/trace_check.h), and its spans against the predicted step.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "common/trace_events.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "report/plan_trace.h"
#include "report/step_timeline.h"
#include "tests/trace_check.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using testing_trace::check_trace;

TEST(PlanTrace, IsAValidTraceOfThePredictedStep) {
  const ModelGraph graph = build_zoo_model("vgg16", 16 * 8);
  const DeviceGraph devices = build_device_graph(ClusterSpec::paper_cluster());  // 4 x 4
  PlanOptions options;
  options.overlap = false;  // then no device is busy for longer than the step
  const Plan plan = make_plan(graph, devices, options);
  std::ostringstream out;
  report::write_plan_trace(out, graph, plan.chosen, devices.device_count());
  const testing_trace::TraceSummary s = check_trace(out.str());
  EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  EXPECT_EQ(s.process_names.size(), 16U);
  EXPECT_EQ(s.process_names.at(3), "gpu 3 (predicted)");
  double last_end = 0;
  for (const auto& [pid, end] : s.end_us) {
    EXPECT_LE(s.busy_us.at(pid), plan.chosen.step_s() * 1e6 * (1 + 1e-6)) << pid;
    last_end = std::max(last_end, end);
  }
  // The last phase ends at the predicted step.
  EXPECT_NEAR(last_end, plan.chosen.step_s() * 1e6, 1e-3 * 1e6 * 1e-3);
}

// The phases cover the step without a gap and end where the planner's timeline ends it;
// compute and moves add up to the forward and backward spans, all-reduces to the buckets'
// sync time. Overlap on and off.
TEST(StepTimeline, PhasesCoverTheStepAndAddUpToTheTimeline) {
  const ModelGraph graph = build_zoo_model("vgg16", 16 * 8);
  const DeviceGraph devices = build_device_graph(ClusterSpec::paper_cluster());
  for (const bool overlap : {true, false}) {
    PlanOptions options;
    options.overlap = overlap;
    const Plan plan = make_plan(graph, devices, options);
    for (const StrategyCost* s :
         {&plan.chosen, &plan.layer_wise, &plan.baselines[0], &plan.baselines[1], &plan.baselines[2]}) {
      const report::StepTimeline t = report::step_timeline(graph, *s, devices.device_count());
      double covered = 0, path = 0, sync = 0;
      for (const report::TimelinePhase& p : t.phases) {
        EXPECT_LE(p.start_s, covered * (1 + 1e-12)) << s->name << ": a gap before a phase of layer " << p.layer;
        covered = std::max(covered, p.start_s + p.duration_s);
        EXPECT_GT(p.duration_s, 0);
        EXPECT_TRUE(std::is_sorted(p.devices.begin(), p.devices.end()));
        (p.kind == report::StepPhase::kSync ? sync : path) += p.duration_s;
        if (p.kind == report::StepPhase::kTransfer) {
          EXPECT_EQ(p.device_bytes.size(), p.devices.size());
          int64_t bytes = 0;
          for (const int64_t b : p.device_bytes) bytes += b;
          // Each pair's bytes count at both ends.
          EXPECT_NEAR(static_cast<double>(bytes), 2.0 * static_cast<double>(p.bytes),
                      2.0 * static_cast<double>(p.devices.size()));
        }
      }
      EXPECT_NEAR(covered, s->step_s(), 1e-12) << s->name;
      EXPECT_NEAR(t.step_s, s->step_s(), 1e-12) << s->name;
      // The backward's phases stretch where all-reduces slow it; that is part of the exposed sync.
      EXPECT_GE(path, (s->timeline.forward_s + s->timeline.backward_s) * (1 - 1e-12)) << s->name;
      EXPECT_LE(path, (s->timeline.forward_s + s->timeline.backward_s + s->timeline.exposed_sync_s) * (1 + 1e-12))
          << s->name;
      EXPECT_NEAR(sync, s->timeline.sync_s, 1e-12) << s->name;
    }
  }
}

TEST(TraceEvents, CheckerCatchesUnmatchedEnds) {
  std::ostringstream good;
  write_trace(good, {{0, "rank 0"}},
              {{0, "conv1", "compute", 0, 5, -1, ""}, {0, "conv2", "compute", 5, 0.5, 64, "conv2"}});
  EXPECT_TRUE(check_trace(good.str()).problems.empty());
  EXPECT_EQ(check_trace(good.str()).spans, 2);
  const std::string bad = R"({"traceEvents":[{"ph":"B","pid":0,"tid":0,"ts":1,"name":"a"},)"
                          R"({"ph":"E","pid":0,"tid":0,"ts":0.5,"name":"a"},{"ph":"B","pid":0,"tid":0,"name":"b"}]})";
  EXPECT_GE(check_trace(bad).problems.size(), 2U);
  EXPECT_EQ(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
}

}  // namespace
}  // namespace layerplan
