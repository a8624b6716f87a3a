#include "report/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "report/report_text.h"

namespace layerplan::report {

namespace {

constexpr double kLabelWidth = 150, kAxisWidth = 1000, kRowHeight = 14, kTitleHeight = 22, kAxisHeight = 18;

struct Scale {
  double px_per_s = 0;
  double x(double seconds) const { return kLabelWidth + seconds * px_per_s; }
};

// A run of consecutive phases [first, last] of one kind, drawn as one rectangle.
struct Run {
  size_t first = 0, last = 0;
};

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", s);
  return text;
}

std::string run_title(const ModelGraph& graph, const StepTimeline& t, const Run& run) {
  const TimelinePhase& a = t.phases[run.first];
  const TimelinePhase& b = t.phases[run.last];
  const double seconds = b.start_s + b.duration_s - a.start_s;
  std::string title = graph.layer(a.layer).name;
  if (run.last > run.first) {
    title += " .. " + graph.layer(b.layer).name + " (" + std::to_string(run.last - run.first + 1) + " phases)";
  }
  title += ": " + std::string(step_phase_name(a.kind)) + ", " + milliseconds(seconds) + " ms";
  int64_t bytes = 0;
  for (size_t i = run.first; i <= run.last; ++i) bytes += t.phases[i].bytes;
  if (bytes > 0) title += ", " + megabytes(static_cast<double>(bytes)) + " MB";
  return title;
}

// Runs of `indices` (ascending phase indices) where each phase directly follows the
// previous one and has its kind.
std::vector<Run> runs_of(const StepTimeline& t, const std::vector<size_t>& indices) {
  std::vector<Run> runs;
  for (const size_t i : indices) {
    const TimelinePhase* last = runs.empty() ? nullptr : &t.phases[runs.back().last];
    // One run: phases next to each other in the list, of one kind, each starting where the last ended.
    if (last != nullptr && runs.back().last + 1 == i && last->kind == t.phases[i].kind &&
        std::abs(last->start_s + last->duration_s - t.phases[i].start_s) <= 1e-12 * std::max(1.0, t.step_s)) {
      runs.back().last = i;
    } else {
      runs.push_back({i, i});
    }
  }
  return runs;
}

// Consecutive runs of a row [first, last] drawn as one rectangle: a single run, or runs
// each narrower than kMergePx that together span at most kMergePx (too narrow to tell
// apart or to hover one by one), coloured by the kind that fills most of it and titled
// with how many layers and phases it covers. A 1,000-layer step on the 1,000-px axis has
// thousands of such runs per row; one element each made the report megabytes of them.
struct Piece {
  size_t first = 0, last = 0;
};

constexpr double kMergePx = 2;  // px: about the narrowest span a pointer can hover

double run_start(const StepTimeline& t, const Run& run) { return t.phases[run.first].start_s; }
double run_end(const StepTimeline& t, const Run& run) {
  return t.phases[run.last].start_s + t.phases[run.last].duration_s;
}

std::vector<Piece> pieces_of(const StepTimeline& t, const std::vector<Run>& runs, const Scale& scale) {
  std::vector<Piece> pieces;
  auto narrow = [&](size_t r) { return (run_end(t, runs[r]) - run_start(t, runs[r])) * scale.px_per_s < kMergePx; };
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!pieces.empty() && narrow(r) && narrow(pieces.back().last) &&
        (run_end(t, runs[r]) - run_start(t, runs[pieces.back().first])) * scale.px_per_s <= kMergePx) {
      pieces.back().last = r;
    } else {
      pieces.push_back({r, r});
    }
  }
  return pieces;
}

// What a piece's phases add up to: seconds by kind (the phases' own: a piece's runs may
// leave gaps between them), bytes and distinct layers.
struct Totals {
  double seconds[3] = {0, 0, 0};  // by StepPhase
  int64_t bytes = 0;
  size_t phases = 0;
  std::vector<int> layers;
};

Totals totals_of(const StepTimeline& t, const std::vector<Run>& runs, const Piece& piece) {
  Totals totals;
  for (size_t r = piece.first; r <= piece.last; ++r) {
    for (size_t i = runs[r].first; i <= runs[r].last; ++i) {
      const TimelinePhase& p = t.phases[i];
      totals.seconds[static_cast<int>(p.kind)] += p.duration_s;
      totals.bytes += p.bytes;
      totals.layers.push_back(p.layer);
      ++totals.phases;
    }
  }
  std::sort(totals.layers.begin(), totals.layers.end());
  totals.layers.erase(std::unique(totals.layers.begin(), totals.layers.end()), totals.layers.end());
  return totals;
}

// The title of merged runs: their first and last layer, how many layers and phases, their time by kind and bytes.
std::string merged_title(const ModelGraph& graph, const StepTimeline& t, const std::vector<Run>& runs,
                         const Piece& piece, const Totals& totals) {
  std::string title = graph.layer(t.phases[runs[piece.first].first].layer).name + " .. " +
                      graph.layer(t.phases[runs[piece.last].last].layer).name + ": " +
                      std::to_string(totals.layers.size()) + " layers, " + std::to_string(totals.phases) + " phases";
  std::string separator = ": ";
  for (const StepPhase kind : {StepPhase::kCompute, StepPhase::kTransfer, StepPhase::kSync}) {
    const double s = totals.seconds[static_cast<int>(kind)];
    if (s <= 0) continue;
    title += separator + step_phase_name(kind) + " " + milliseconds(s) + " ms";
    separator = ", ";
  }
  if (totals.bytes > 0) title += ", " + megabytes(static_cast<double>(totals.bytes)) + " MB";
  return title;
}

// `y` < 0: a device row's span, at the top of its row's <g>.
void write_piece(XmlWriter& xml, const ModelGraph& graph, const StepTimeline& t, const std::vector<Run>& runs,
                 const Piece& piece, const Scale& scale, double y, const char* cls) {
  const Run& a = runs[piece.first];
  const Run& b = runs[piece.last];
  const Totals totals = totals_of(t, runs, piece);
  const double* s = totals.seconds;
  // Merged runs take the colour of the kind that fills most of them.
  const auto kind = static_cast<StepPhase>(std::max_element(s, s + 3) - s);
  const bool merged = piece.last > piece.first;
  const std::string cls_text = std::string(cls) + " " + step_phase_name(kind) + (merged ? " merged" : "");
  const std::string x = px(scale.x(run_start(t, a)));
  const std::string width = px(std::max((run_end(t, b) - run_start(t, a)) * scale.px_per_s, 0.1));
  const std::string title = merged ? merged_title(graph, t, runs, piece, totals) : run_title(graph, t, a);
  // Its height is the style sheet's. A device row's spans sit at the top of its <g>, which
  // places the row; the strips' phases give their y and their seconds.
  if (y < 0) {
    xml.titled("rect", {{"class", cls_text}, {"x", x}, {"width", width}}, title);
  } else {
    xml.titled(
        "rect",
        {{"class", cls_text}, {"x", x}, {"y", px(y)}, {"width", width}, {"data-s", seconds_text(s[0] + s[1] + s[2])}},
        title);
  }
}

void write_row(XmlWriter& xml, const ModelGraph& graph, const StepTimeline& t, const std::vector<size_t>& phases,
               const Scale& scale, double y, const char* cls) {
  const std::vector<Run> runs = runs_of(t, phases);
  for (const Piece& piece : pieces_of(t, runs, scale)) write_piece(xml, graph, t, runs, piece, scale, y, cls);
}

// The axis of one strategy's scale under its rows: about 10 ticks at 1, 2 or 5 times a power
// of ten of milliseconds, and the step's own length at the end.
void write_axis(XmlWriter& xml, double step_s, const Scale& scale, double y) {
  xml.open("g", {{"class", "axis"}, {"data-ms-per-px", seconds_text(1e3 / scale.px_per_s)}});
  const double raw = step_s * 1e3 / 10;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double step_ms = raw / power < 2 ? 2 * power : raw / power < 5 ? 5 * power : 10 * power;
  for (double ms = 0; ms <= step_s * 1e3 * (1 + 1e-9); ms += step_ms) {
    const double x = scale.x(ms / 1e3);
    xml.leaf("line", {{"class", "tick"}, {"x1", px(x)}, {"x2", px(x)}, {"y1", px(y)}, {"y2", px(y + 4)}});
    char label[32];
    std::snprintf(label, sizeof label, "%g", ms);
    xml.leaf("text", {{"x", px(x)}, {"y", px(y + 14)}, {"class", "tick"}}, label);
  }
  xml.leaf("line", {{"class", "end"},
                    {"x1", px(scale.x(step_s))},
                    {"x2", px(scale.x(step_s))},
                    {"y1", px(y - 2)},
                    {"y2", px(y + 6)}});
  xml.leaf("text", {{"x", px(scale.x(step_s) + 6)}, {"y", px(y + 14)}, {"class", "end"}}, milliseconds(step_s) + " ms");
  xml.close();
}

// Devices that take part in exactly the same phases share a row.
std::map<std::vector<size_t>, std::vector<int>> device_groups(const StepTimeline& t) {
  std::vector<std::vector<size_t>> phases_of(static_cast<size_t>(t.device_count));
  for (size_t i = 0; i < t.phases.size(); ++i) {
    for (const int d : t.phases[i].devices) phases_of[static_cast<size_t>(d)].push_back(i);
  }
  std::map<std::vector<size_t>, std::vector<int>> groups;
  for (int d = 0; d < t.device_count; ++d) groups[phases_of[static_cast<size_t>(d)]].push_back(d);
  return groups;
}

// How long `t` is against the first timeline: "" for the first, else e.g. ", 40.6x data parallel's step".
std::string against(const StepTimeline& t, const StepTimeline& first) {
  if (&t == &first || first.step_s <= 0) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.3gx", t.step_s / first.step_s);
  return std::string(", ") + text + " the step of " + first.strategy;
}

double write_timeline(XmlWriter& xml, const ModelGraph& graph, const StepTimeline& t, const StepTimeline& first,
                      double y) {
  // Each strategy to its own scale: its step spans the axis.
  const Scale scale{t.step_s > 0 ? kAxisWidth / t.step_s : 0};
  xml.open("g", {{"class", "timeline"}, {"data-strategy", t.strategy}, {"data-step-s", seconds_text(t.step_s)}});
  xml.leaf(
      "text", {{"x", "0"}, {"y", px(y + 15)}, {"class", "strategy"}},
      t.strategy + ": " + milliseconds(t.step_s) + " ms per step" + against(t, first) + " (drawn to its own scale)");
  y += kTitleHeight;
  // The step's path (compute and moves, layer after layer) in one row, the all-reduces
  // (which may run beside the backward) in another.
  std::vector<size_t> path, sync;
  for (size_t i = 0; i < t.phases.size(); ++i) (t.phases[i].kind == StepPhase::kSync ? sync : path).push_back(i);
  struct Row {
    const char* label;
    const char* cls;
    const std::vector<size_t>* phases;
  };
  for (const Row& row : {Row{"compute, moves", "phase path", &path}, Row{"all-reduces", "phase all-reduces", &sync}}) {
    if (row.phases->empty()) continue;
    xml.leaf("text", {{"x", px(kLabelWidth - 6)}, {"y", px(y + kRowHeight - 3)}, {"class", "label"}}, row.label);
    write_row(xml, graph, t, *row.phases, scale, y, row.cls);
    y += kRowHeight;
  }
  y += 4;
  for (const auto& [phases, devices] : device_groups(t)) {
    xml.open(
        "g",
        {{"class", "devices"}, {"data-devices", device_list(devices)}, {"transform", "translate(0," + px(y) + ")"}});
    xml.leaf("text", {{"x", px(kLabelWidth - 6)}, {"y", px(kRowHeight - 3)}, {"class", "label"}},
             clipped_label(gpu_ranges(devices), 22));
    write_row(xml, graph, t, phases, scale, -1, "span");
    xml.close();
    y += kRowHeight;
  }
  if (t.step_s > 0) write_axis(xml, t.step_s, scale, y);
  xml.close();
  return y + kAxisHeight + 8;
}

}  // namespace

void write_timeline_legend(XmlWriter& xml) {
  xml.open(
      "svg",
      {{"xmlns", "http://www.w3.org/2000/svg"}, {"class", "timelines legend"}, {"width", "420"}, {"height", "22"}});
  double x = 0;
  for (const StepPhase kind : {StepPhase::kCompute, StepPhase::kTransfer, StepPhase::kSync}) {
    xml.leaf("rect", {{"class", step_phase_name(kind)}, {"x", px(x)}, {"y", "4"}, {"width", "16"}, {"height", "12"}});
    xml.leaf("text", {{"x", px(x + 22)}, {"y", "15"}}, step_phase_name(kind));
    x += 110;
  }
  xml.close();
}

void write_timelines(XmlWriter& xml, const ModelGraph& graph, const std::vector<StepTimeline>& timelines) {
  double height = 0;
  for (const StepTimeline& t : timelines) {
    height +=
        kTitleHeight + 2 * kRowHeight + 4 + static_cast<double>(device_groups(t).size()) * kRowHeight + kAxisHeight + 8;
  }
  const double width = kLabelWidth + kAxisWidth + 110;
  xml.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "timelines"},
                   {"width", px(width)},
                   {"height", px(height)},
                   {"viewBox", "0 0 " + px(width) + " " + px(height)}});
  double y = 0;
  for (const StepTimeline& t : timelines) y = write_timeline(xml, graph, t, timelines.front(), y);
  xml.close();
}

}  // namespace layerplan::report
