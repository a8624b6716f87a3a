#include "cli/plan_report.h"

#include <cstdio>
#include <string>

#include "cli/text_format.h"

namespace layerplan {

namespace {

double ms(double seconds) { return seconds * 1e3; }
double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

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
  out << "\n"
      << format("%-16s %10s %11s %9s %11s %11s %9s %14s\n", "strategy", "step ms", "images/s", "speedup", "compute ms",
                "transfer ms", "sync ms", "comm MB/step");
  const double reference = plan.baselines.front().step_s();  // data parallel
  auto row = [&](const StrategyCost& s) {
    out << format("%-16s %10.2f %11.1f %8.2fx %11.2f %11.2f %9.2f %14.1f\n", s.name.c_str(), ms(s.step_s()),
                  static_cast<double>(plan.batch) / s.step_s(), reference / s.step_s(), ms(s.compute_s),
                  ms(s.transfer_s), ms(s.sync_s), mb(s.communication_bytes()));
  };
  row(plan.chosen);
  for (const StrategyCost& b : plan.baselines) row(b);
  const StrategyCost& best = plan.best_baseline();
  const StrategyCost& data_parallel = plan.baselines.front();
  // How many times less this plan communicates than `other`, or "none" if it moves nothing.
  auto less_communication = [&](const StrategyCost& other) {
    if (plan.chosen.communication_bytes() == 0) return std::string("no communication at all");
    const double ratio =
        static_cast<double>(other.communication_bytes()) / static_cast<double>(plan.chosen.communication_bytes());
    return ratio >= 1 ? format("%.1fx less communication", ratio) : format("%.1fx more communication", 1 / ratio);
  };
  out << "\n"
      << format("%s vs data parallel: %.2fx faster, %s\n", plan.chosen.name.c_str(),
                data_parallel.step_s() / plan.chosen.step_s(), less_communication(data_parallel).c_str())
      << format("%s vs best baseline (%s): %.2fx faster, %s\n", plan.chosen.name.c_str(), best.name.c_str(),
                best.step_s() / plan.chosen.step_s(), less_communication(best).c_str());
  const SearchStats& st = plan.search_stats;
  out << format(
      "search: %.3f s (cost tables %.3f s), %d node and %d edge eliminations, %d nodes left, "
      "%d conditioned, %.1f MB of tables\n",
      plan.search_s, plan.tables_s, st.node_eliminations, st.edge_eliminations, st.remaining_nodes,
      st.conditioned_nodes, mb(st.table_bytes_peak));
  const PlannerMemory& m = plan.memory;
  if (m.configurations > 0) {
    out << format(
        "search memory: %.1f MB at the peak (configurations %.1f, cost tables %.1f, shared tables %.1f, edge "
        "pricing %.1f, elimination %.1f; estimated %.1f before)\n",
        mb(m.peak()), mb(m.configurations), mb(m.cost_tables), mb(m.shared_tables), mb(m.edge_pricing),
        mb(m.elimination), mb(m.estimated));
  }
  if (!plan.warning.empty()) out << "warning: " << plan.warning << "\n";
}

}  // namespace layerplan
