#include "cli/plan_report.h"

#include <cstdio>
#include <string>

#include "cli/memory_report.h"
#include "cli/text_format.h"
#include "common/text.h"
#include "planner/plan_notes.h"

namespace layerplan {

namespace {

double ms(double seconds) { return seconds * 1e3; }
double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

// The chosen plan's gradient all-reduces as the timeline ran them (-v).
void print_all_reduces(std::ostream& out, const StrategyCost& s, const ModelGraph& graph) {
  constexpr size_t kShown = 24;
  const StepTimeline& t = s.timeline;
  if (t.spans.empty()) return;
  out << format("\nall-reduces of %s (ms on the step's timeline; the backward ends at %.2f ms):\n", s.name.c_str(),
                ms(t.forward_s + t.backward_s));
  for (size_t i = 0; i < t.spans.size() && i < kShown; ++i) {
    const SyncSpan& a = t.spans[i];
    const std::string after = a.after_layer < 0 ? "the backward" : graph.layer(a.after_layer).name;
    const std::string how =
        a.parameter_server ? std::string("param. server")
                           : std::string(algorithm_name(a.algorithm)) + "/" + std::string(protocol_name(a.protocol));
    out << format("  after %-28s %9.2f MB over %5d GPUs  %-13s %9.2f -> %9.2f\n", after.c_str(),
                  mb(static_cast<int64_t>(a.bytes)), a.ranks, how.c_str(), ms(a.start_s), ms(a.end_s));
  }
  if (t.spans.size() > kShown) out << format("  ... and %zu more\n", t.spans.size() - kShown);
}

// The GPUs the plan leaves idle, the faster plan the simplicity margin set aside, and the
// lower bound on the step (planner/plan_notes.h), one line each where there is one.
void print_choice_notes(std::ostream& out, const Plan& plan) {
  for (const std::string& line : {idle_devices_text(plan), set_aside_text(plan), lower_bound_text(plan)}) {
    if (!line.empty()) out << line << "\n";
  }
}

}  // namespace

void print_plan_report(std::ostream& out, const Plan& plan, const ModelGraph& graph, const DeviceGraph& devices,
                       bool verbose) {
  out << "model " << plan.model << ", batch " << plan.batch << ", " << devices.describe() << "\n\n";
  out << format("%-28s %-16s %-18s %-26s %11s %11s %9s%s\n", "layer", "kind", "output", "configuration", "compute ms",
                "transfer ms", "sync ms", verbose ? "   configs" : "");
  for (const Layer& l : graph.layers()) {
    const LayerCost& row = plan.chosen.layers[static_cast<size_t>(l.id)];
    out << format("%-28s %-16s %-18s %-26s %11.3f %11.3f %9.3f", l.name.c_str(), std::string(kind_name(l.kind)).c_str(),
                  l.output.str().c_str(), row.config.str().c_str(), ms(row.compute_s), ms(row.transfer_s),
                  ms(row.sync_s));
    if (verbose) out << format(" %9d", plan.space_sizes[static_cast<size_t>(l.id)]);
    out << "\n";
  }
  // Two figures per strategy: the step by the timeline (buckets overlapping the backward
  // when --overlap is on) and the search's additive objective.
  out << "\n"
      << format("%-22s %9s %11s %11s %8s %11s %11s %9s %9s %14s\n", "strategy", "step ms", "additive ms", "images/s",
                "speedup", "compute ms", "transfer ms", "sync ms", "exposed", "comm MB/step");
  const double reference = plan.baselines.front().step_s();  // data parallel
  auto row = [&](const StrategyCost& s, const char* suffix) {
    out << format("%-22s %9.2f %11.2f %11.1f %7.2fx %11.2f %11.2f %9.2f %9.2f %14.1f\n", (s.name + suffix).c_str(),
                  ms(s.step_s()), ms(s.additive_s()), static_cast<double>(plan.batch) / s.step_s(),
                  reference / s.step_s(), ms(s.compute_s), ms(s.transfer_s), ms(s.timeline.sync_s),
                  ms(s.timeline.exposed_sync_s), mb(s.communication_bytes()));
  };
  const bool searched_not_chosen = !plan.layer_wise.layers.empty() && plan.chosen.name != plan.layer_wise.name;
  row(plan.chosen, searched_not_chosen ? " (chosen)" : "");
  if (searched_not_chosen) row(plan.layer_wise, " (searched)");
  for (const StrategyCost& b : plan.baselines) {
    if (b.name != plan.chosen.name) row(b, "");  // a chosen baseline is listed once, as chosen
  }
  out << "step: the timeline, bucket all-reduces " << (plan.overlap ? "overlapping" : "after")
      << " the backward; additive: the search's objective; sync: the buckets' all-reduces; exposed: what sync adds to "
         "the step\n";
  if (verbose) print_all_reduces(out, plan.chosen, graph);
  print_memory_report(out, plan, devices);
  const StrategyCost& best = plan.best_baseline();
  const StrategyCost& data_parallel = plan.baselines.front();
  // The search's plan against the baselines (the chosen one after a fall-back).
  const StrategyCost& subject = plan.layer_wise.layers.empty() ? plan.chosen : plan.layer_wise;
  // How many times less the subject communicates than `other`, or "none" if it moves nothing.
  auto less_communication = [&](const StrategyCost& other) {
    if (subject.communication_bytes() == 0) return std::string("no communication at all");
    const double ratio =
        static_cast<double>(other.communication_bytes()) / static_cast<double>(subject.communication_bytes());
    return ratio >= 1 ? format("%.1f\u00d7 less communication", ratio)
                      : format("%.1f\u00d7 more communication", 1 / ratio);
  };
  auto compare = [&](const std::string& what, const StrategyCost& other) {
    out << format("%s vs %s: %s, %s (additive: %s)\n", subject.name.c_str(), what.c_str(),
                  speed_words(other.step_s() / subject.step_s()).c_str(), less_communication(other).c_str(),
                  speed_words(other.additive_s() / subject.additive_s()).c_str());
  };
  out << "\n";
  compare("data parallel", data_parallel);
  compare("best baseline (" + best.name + ")", best);
  const SearchStats& st = plan.search_stats;
  out << format(
      "search: %.3f s (cost tables %.3f s), %d node and %d edge eliminations, %d nodes left, "
      "%d conditioned, %.1f MB of tables\n",
      plan.search_s, plan.tables_s, st.node_eliminations, st.edge_eliminations, st.remaining_nodes,
      st.conditioned_nodes, mb(st.table_bytes_peak));
  if (st.tied_nodes > 0) {
    out << format("search space: %d concats tied to their dense block's configuration (docs/planner.md §7)\n",
                  st.tied_nodes);
  }
  const PlannerMemory& m = plan.search_memory;
  if (m.configurations > 0) {
    out << format(
        "search memory: %.1f MB at the peak (configurations %.1f, cost tables %.1f, shared tables %.1f, edge "
        "pricing %.1f, elimination %.1f; estimated %.1f before)\n",
        mb(m.peak()), mb(m.configurations), mb(m.cost_tables), mb(m.shared_tables), mb(m.edge_pricing),
        mb(m.elimination), mb(m.estimated));
  }
  print_choice_notes(out, plan);
  if (!plan.note.empty()) out << "note: " << plan.note << "\n";
  if (!plan.warning.empty()) out << "warning: " << plan.warning << "\n";
}

}  // namespace layerplan
