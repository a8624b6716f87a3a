#include "report/report_page.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/version.h"
#include "planner/plan_notes.h"
#include "report/device_grid_svg.h"
#include "report/glossary.h"
#include "report/layer_graph_svg.h"
#include "report/page_tables.h"
#include "report/report_text.h"
#include "report/scaling_chart_svg.h"
#include "report/split_colors.h"
#include "report/step_timeline.h"
#include "report/timeline_svg.h"
#include "report/xml_writer.h"

namespace layerplan::report {

namespace {

// No '<' or '&' in here: it goes into the page as is.
constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
p.note { color: #555; max-width: 70em; }
nav a { margin-right: 14px; }
.scroll { overflow: auto; max-height: 900px; border: 1px solid #eee; }
svg text { font: 11px system-ui, sans-serif; fill: #222; }
svg.graph text.name { font-weight: 600; } svg.graph text.config { font-size: 10px; }
svg.graph path.edge { stroke: #888; fill: none; stroke-width: 1; }
svg.graph rect { stroke: #555; stroke-width: 0.6; }
svg.grid text.label, svg.timelines text.label { text-anchor: end; }
svg.grid text.head, svg.grid text.tileno { text-anchor: middle; font-size: 9px; }
svg.grid rect.stripe { fill: #f4f4f4; }
svg.timelines rect.compute { fill: #4e79a7; } svg.timelines rect.transfer { fill: #76b7b2; }
svg.timelines rect.sync { fill: #e15759; } svg.timelines text.strategy { font-weight: 600; font-size: 12px; }
svg.timelines text.tick, svg.scaling text.tick { text-anchor: middle; }
svg.timelines g.timeline rect { height: 12px; }
svg line.tick { stroke: #444; } svg.scaling rect.plot { fill: none; stroke: #999; }
svg.scaling line.gridline { stroke: #eee; } svg.scaling text.yl { text-anchor: end; }
svg.scaling text.ylabel { text-anchor: middle; } svg.scaling path.line { fill: none; stroke-width: 2; }
svg.scaling path.line.chosen { stroke-width: 9; stroke-opacity: 0.35; }
svg.scaling line.job { stroke: #999; stroke-dasharray: 4 3; }
table { border-collapse: collapse; font-size: 12px; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } th { text-align: left; background: #f6f6f6; }
dl.glossary dt { font-weight: 600; margin-top: 6px; } dl.glossary dd { margin-left: 2em; max-width: 70em; }
svg.timelines text.end { font-weight: 600; } svg.timelines line.end { stroke: #222; stroke-width: 2; }
p.searched { font-weight: 600; }
pre { font-size: 11px; background: #f8f8f8; padding: 8px; overflow: auto; }
)";

void write_head(XmlWriter& xml, const ReportInput& in) {
  xml.open("head");
  xml.leaf("meta", {{"charset", "utf-8"}});
  xml.leaf("title", {}, "layerplan: " + in.plan.model + " on " + std::to_string(in.devices.device_count()) + " GPUs");
  xml.open("style");
  xml.raw(kStyle);
  xml.close();
  xml.close();
}

void write_intro(XmlWriter& xml, const ReportInput& in) {
  const Plan& plan = in.plan;
  xml.leaf("h1", {}, "layerplan: " + plan.model + ", batch " + std::to_string(plan.batch));
  xml.leaf("p", {{"class", "note"}}, in.devices.describe());
  xml.leaf("p", {{"class", "version"}}, "Written by " + version_line() + ".");
  char line[256];
  const StrategyCost& data = plan.baselines.front();
  std::snprintf(line, sizeof line, "%s: %.2f ms per step, %.1f images/s, %.2fx data parallelism's speed.",
                plan.chosen.name.c_str(), plan.chosen.step_s() * 1e3,
                static_cast<double>(plan.batch) / plan.chosen.step_s(), data.step_s() / plan.chosen.step_s());
  xml.leaf("p", {}, line);
  if (const StrategyCost* searched = searched_not_chosen(plan); searched != nullptr) {
    const std::string named = searched->name == "layer-wise" ? "" : " (" + searched->name + ")";
    std::snprintf(line, sizeof line,
                  "The layer-wise search's plan%s: %.2f ms per step, %.3gx the chosen step; shown under \u201cThe "
                  "searched plan\u201d below.",
                  named.c_str(), searched->step_s() * 1e3, searched->step_s() / plan.chosen.step_s());
    xml.leaf("p", {{"class", "searched"}}, line);
  }
  // The GPUs left idle, the plan the simplicity margin set aside (planner/plan_notes.h).
  if (const std::string idle = idle_devices_text(plan); !idle.empty()) xml.leaf("p", {{"class", "idle"}}, idle + ".");
  if (const std::string aside = set_aside_text(plan); !aside.empty()) {
    xml.leaf("p", {{"class", "set-aside"}}, aside + ".");
  }
  if (!plan.warning.empty()) xml.leaf("p", {{"class", "note"}}, "warning: " + plan.warning);
  xml.open("nav");
  for (const auto& [id, label] :
       {std::pair{"graph", "layer graph"}, std::pair{"grid", "devices x layers"},
        std::pair{"timeline", "predicted step"}, std::pair{"searched", "searched plan"},
        std::pair{"scaling", "scaling"}, std::pair{"numbers", "numbers"}, std::pair{"glossary", "glossary"}}) {
    if (std::string_view(id) == "searched" && searched_not_chosen(plan) == nullptr) continue;
    xml.leaf("a", {{"href", std::string("#") + id}}, label);
  }
  xml.close();
}

void write_section(XmlWriter& xml, const char* id, const char* heading, const char* note) {
  xml.open("section", {{"id", id}});
  xml.leaf("h2", {}, heading);
  xml.leaf("p", {{"class", "note"}}, note);
}

void write_pictures(XmlWriter& xml, const ReportInput& in) {
  write_section(xml, "graph", "The layer graph",
                "Each layer of the plan, coloured by how it is split and labelled with its degrees and devices; "
                "branches stand side by side. Hover a layer for its shape and predicted times.");
  write_split_legend(xml);
  xml.open("div", {{"class", "scroll"}});
  write_layer_graph(xml, in.graph, in.plan.chosen);
  xml.close();
  xml.close();
  write_section(xml, "grid", "Devices x layers",
                "A row per layer, a column per device: a cell where the device computes a tile of the layer, "
                "numbered as in docs/plan-format.md (channel innermost, then width, height, sample).");
  xml.open("div", {{"class", "scroll"}});
  write_device_grid(xml, in.graph, in.plan.chosen, in.devices.device_count());
  xml.close();
  xml.close();
  write_section(xml, "timeline", "The predicted step",
                "Each strategy's step as the planner's timeline lays it out (docs/cost-model.md), each row drawn to "
                "its own time scale: a strategy's step spans the whole width, its axis below it gives its "
                "milliseconds, and its title its length against the first. "
                "The forward pass layer after layer (the moves into a layer, then its compute), the backward in "
                "reverse (compute, then the gradients' moves back), and the buckets' all-reduces (sync) where they "
                "run, beside the backward when they overlap it. "
                "Devices that take part in the same phases share a row; a span covers the phase, which the model "
                "prices by its slowest device.");
  std::vector<StepTimeline> timelines;
  for (const auto& [strategy, role] : strategy_rows(in.plan)) {
    // A searched plan split as the chosen one has its timeline.
    if (role == "searched" && split_alike(*strategy, in.plan.chosen)) continue;
    timelines.push_back(step_timeline(in.graph, *strategy, in.devices.device_count()));
  }
  write_timeline_legend(xml);
  xml.open("div", {{"class", "scroll"}});
  write_timelines(xml, in.graph, timelines);
  xml.close();
  xml.close();
}

// The searched layer-wise plan when another strategy was chosen over it: its step, its
// device grid and its layers, so the search's answer is seen, not only the baseline's.
void write_searched(XmlWriter& xml, const ReportInput& in, const StrategyCost& searched) {
  const Plan& plan = in.plan;
  char note[512];
  std::snprintf(note, sizeof note,
                "The chosen strategy, %s (%.2f ms per step), is what the layer graph and the grid above show. The "
                "layer-wise search found this plan, %s: %.2f ms per step by the timeline, %.2f ms by the search's "
                "additive objective.",
                plan.chosen.name.c_str(), plan.chosen.step_s() * 1e3, searched.name.c_str(), searched.step_s() * 1e3,
                searched.additive_s() * 1e3);
  char step[32];
  std::snprintf(step, sizeof step, "%.10g", searched.step_s());
  xml.open("section", {{"id", "searched"}, {"data-strategy", searched.name}, {"data-step-s", step}});
  xml.leaf("h2", {}, "The searched plan");
  xml.leaf("p", {{"class", "note"}}, note);
  write_difference_table(xml, in.graph, plan.chosen, searched);
  if (split_alike(plan.chosen, searched)) {
    // Drawn once: a 1,000-layer model's grid, table and timeline are megabytes.
    xml.leaf("p", {{"class", "note"}}, "Its grid, layers and timeline are the chosen plan's, above.");
    xml.close();
    return;
  }
  xml.open("div", {{"class", "scroll"}});
  write_device_grid(xml, in.graph, searched, in.devices.device_count());
  xml.close();
  xml.open("details");
  xml.leaf("summary", {}, "every layer of the searched plan");
  write_layer_table(xml, plan, searched, in.graph, "layers searched");
  xml.close();
  xml.close();
}

void write_scaling(XmlWriter& xml, const ReportInput& in) {
  write_section(xml, "scaling", "Scaling",
                "Predicted images/s against the GPU count on the same kind of cluster with the same images per GPU, "
                "each count planned afresh. The chosen plan (the wide pale line; its points name it) lies on the "
                "line of whichever strategy was chosen at that count; the layer-wise search's line is its plan "
                "whether chosen or not (a hollow point: no searched plan there, the search ran out of its budget "
                "or the plan came from a plan file, and the chosen plan stands in); then each baseline.");
  if (in.scaling) {
    write_scaling_chart(xml, *in.scaling);
    if (!in.scaling->note.empty()) xml.leaf("p", {{"class", "note"}}, in.scaling->note);
    write_scaling_table(xml, *in.scaling);
  } else {
    xml.leaf("p", {{"class", "note"}}, "Not computed for this report.");
  }
  xml.close();
}

}  // namespace

std::string report_html(const ReportInput& in) {
  XmlWriter xml;
  xml.raw("<!DOCTYPE html>\n");
  xml.open("html", {{"xmlns", "http://www.w3.org/1999/xhtml"}, {"lang", "en"}});
  write_head(xml, in);
  xml.open("body");
  write_intro(xml, in);
  write_pictures(xml, in);
  if (const StrategyCost* searched = searched_not_chosen(in.plan); searched != nullptr)
    write_searched(xml, in, *searched);
  write_scaling(xml, in);
  write_section(xml, "numbers", "The numbers", "What `layerplan plan` prints, as tables (the words: glossary below).");
  write_strategy_table(xml, in.plan);
  write_layer_table(xml, in.plan, in.plan.chosen, in.graph);
  if (!in.measured.empty()) write_measured_table(xml, in.plan, in.graph, in.measured);
  if (!in.text_report.empty()) {
    xml.open("details");
    xml.leaf("summary", {}, "the text report");
    xml.leaf("pre", {}, in.text_report);
    xml.close();
  }
  xml.close();
  write_glossary(xml);
  xml.close();
  xml.close();
  return xml.finish() + "\n";
}

}  // namespace layerplan::report
