#include "report/page_tables.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "report/report_text.h"

namespace layerplan::report {

namespace {

std::string fixed(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

void header_row(XmlWriter& xml, std::initializer_list<const char*> names) {
  xml.open("tr");
  for (const char* n : names) xml.leaf("th", {}, n);
  xml.close();
}

void cell(XmlWriter& xml, const std::string& text, bool number = true) {
  if (number) {
    xml.leaf("td", {{"class", "num"}}, text);
  } else {
    xml.leaf("td", {}, text);
  }
}

}  // namespace

const StrategyCost* searched_not_chosen(const Plan& plan) {
  const bool differs = !plan.layer_wise.layers.empty() && plan.layer_wise.name != plan.chosen.name;
  return differs ? &plan.layer_wise : nullptr;
}

std::vector<StrategyRow> strategy_rows(const Plan& plan) {
  const StrategyCost* searched = searched_not_chosen(plan);
  std::vector<StrategyRow> rows{{&plan.chosen, searched != nullptr ? "chosen" : ""}};
  if (searched != nullptr) rows.push_back({searched, "searched"});
  for (const StrategyCost& b : plan.baselines) {
    // A baseline that was chosen is its row already.
    if (b.name != plan.chosen.name) rows.push_back({&b, ""});
  }
  return rows;
}

void write_strategy_table(XmlWriter& xml, const Plan& plan) {
  xml.open("table", {{"class", "strategies"}});
  header_row(xml, {"strategy", "step ms", "additive ms", "images/s", "speedup", "compute ms", "transfer ms", "sync ms",
                   "exposed ms", "comm MB/step"});
  const double reference = plan.baselines.front().step_s();
  for (const auto& [s, role] : strategy_rows(plan)) {
    if (role.empty()) {
      xml.open("tr", {{"data-strategy", s->name}});
    } else {
      xml.open("tr", {{"data-strategy", s->name}, {"data-role", role}});
    }
    cell(xml, s->name + (role.empty() ? "" : " (" + role + ")"), false);
    cell(xml, fixed(s->step_s() * 1e3, 2));
    cell(xml, fixed(s->additive_s() * 1e3, 2));
    cell(xml, fixed(static_cast<double>(plan.batch) / s->step_s(), 1));
    cell(xml, fixed(reference / s->step_s(), 2) + "x");
    cell(xml, fixed(s->compute_s * 1e3, 2));
    cell(xml, fixed(s->transfer_s * 1e3, 2));
    cell(xml, fixed(s->timeline.sync_s * 1e3, 2));
    cell(xml, fixed(s->timeline.exposed_sync_s * 1e3, 2));
    cell(xml, fixed(static_cast<double>(s->communication_bytes()) / 1e6, 1));
    xml.close();
  }
  xml.close();
}

void write_layer_table(XmlWriter& xml, const Plan& plan, const StrategyCost& strategy, const ModelGraph& graph,
                       const std::string& table_class) {
  xml.open("table", {{"class", table_class}, {"data-strategy", strategy.name}});
  header_row(xml, {"layer", "kind", "output", "configuration", "compute ms", "transfer ms", "sync ms", "configs"});
  for (const Layer& l : graph.layers()) {
    const LayerCost& row = strategy.layers[static_cast<size_t>(l.id)];
    xml.open("tr", {{"data-layer", l.name}});
    cell(xml, l.name, false);
    cell(xml, std::string(kind_name(l.kind)), false);
    cell(xml, l.output.str(), false);
    cell(xml, row.config.str(), false);
    cell(xml, milliseconds(row.compute_s));
    cell(xml, milliseconds(row.transfer_s));
    cell(xml, milliseconds(row.sync_s));
    const auto id = static_cast<size_t>(l.id);
    cell(xml, id < plan.space_sizes.size() ? std::to_string(plan.space_sizes[id]) : "");
    xml.close();
  }
  xml.close();
}

bool split_alike(const StrategyCost& a, const StrategyCost& b) {
  if (a.layers.size() != b.layers.size()) return false;
  for (size_t i = 0; i < a.layers.size(); ++i) {
    if (!(a.layers[i].config == b.layers[i].config)) return false;
  }
  return true;
}

void write_difference_table(XmlWriter& xml, const ModelGraph& graph, const StrategyCost& chosen,
                            const StrategyCost& searched) {
  std::vector<const Layer*> differ;
  for (const Layer& l : graph.layers()) {
    const auto id = static_cast<size_t>(l.id);
    if (!(chosen.layers[id].config == searched.layers[id].config)) differ.push_back(&l);
  }
  xml.leaf("p", {{"class", "differences"}},
           std::to_string(differ.size()) + " of " + std::to_string(graph.size()) + " layers split otherwise than in " +
               chosen.name + (differ.empty() ? "." : ":"));
  if (differ.empty()) return;
  xml.open("table", {{"class", "differences"}});
  xml.open("tr");
  for (const std::string& head : {std::string("layer"), chosen.name, searched.name + " (searched)"}) {
    xml.leaf("th", {}, head);
  }
  xml.close();
  for (const Layer* l : differ) {
    const auto id = static_cast<size_t>(l->id);
    xml.open("tr", {{"data-layer", l->name}});
    cell(xml, l->name, false);
    cell(xml, chosen.layers[id].config.str(), false);
    cell(xml, searched.layers[id].config.str(), false);
    xml.close();
  }
  xml.close();
}

void write_scaling_table(XmlWriter& xml, const ScalingCurve& curve) {
  xml.open("table", {{"class", "scaling"}});
  xml.open("tr");
  xml.leaf("th", {}, "GPUs");
  xml.leaf("th", {}, "chosen");
  for (const std::string& s : curve.strategies) xml.leaf("th", {}, s + " images/s");
  xml.close();
  for (const ScalingPoint& p : curve.points) {
    xml.open("tr");
    cell(xml, std::to_string(p.gpus));
    cell(xml, p.chosen, false);
    for (size_t s = 0; s < p.images_per_s.size(); ++s) {
      cell(xml, fixed(p.images_per_s[s], 1) + (s == kSearchSeries && p.layerwise_fell_back ? " (chosen)" : ""));
    }
    xml.close();
  }
  xml.close();
}

void write_measured_table(XmlWriter& xml, const Plan& plan, const ModelGraph& graph,
                          const std::vector<MeasuredProfile>& measured) {
  xml.leaf("h2", {}, "Measured against predicted");
  xml.leaf("p", {{"class", "note"}},
           "Per layer and step: the prediction for this plan's cluster, and the slowest of the " +
               std::to_string(measured.size()) +
               " measured rank(s) (`layerplan train --profile`), on whatever machine they ran.");
  std::map<std::string, MeasuredLayer> slowest;
  for (const MeasuredProfile& p : measured) {
    for (const MeasuredLayer& m : p.layers) {
      MeasuredLayer& s = slowest[m.layer];
      s.compute_s = std::max(s.compute_s, m.compute_s);
      s.moves_s = std::max(s.moves_s, m.moves_s);
      s.statistics_s = std::max(s.statistics_s, m.statistics_s);
    }
  }
  xml.open("table", {{"class", "measured"}});
  header_row(xml, {"layer", "predicted compute ms", "measured compute ms", "predicted transfer ms", "measured moves ms",
                   "measured statistics ms"});
  for (const Layer& l : graph.layers()) {
    const LayerCost& row = plan.chosen.layers[static_cast<size_t>(l.id)];
    const auto it = slowest.find(l.name);
    const MeasuredLayer m = it == slowest.end() ? MeasuredLayer{} : it->second;
    xml.open("tr");
    cell(xml, l.name, false);
    cell(xml, milliseconds(row.compute_s));
    cell(xml, milliseconds(m.compute_s));
    cell(xml, milliseconds(row.transfer_s));
    cell(xml, milliseconds(m.moves_s));
    cell(xml, milliseconds(m.statistics_s));
    xml.close();
  }
  xml.close();
}

}  // namespace layerplan::report
