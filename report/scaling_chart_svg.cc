#include "report/scaling_chart_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

namespace layerplan::report {

namespace {

constexpr double kLeft = 70, kTop = 16, kPlotWidth = 640, kPlotHeight = 300, kBottom = 46, kLegendWidth = 170;
// The chosen plan, the layer-wise search, data parallel, model parallel, owt.
constexpr std::array<const char*, 5> kLineColors = {"#9467bd", "#d62728", "#4e79a7", "#f28e2b", "#59a14f"};

struct Axes {
  double log_min = 0, log_max = 1, y_max = 1, y_step = 1;
  double x(int gpus) const {
    const double span = log_max > log_min ? log_max - log_min : 1;
    return kLeft + (std::log2(static_cast<double>(gpus)) - log_min) / span * kPlotWidth;
  }
  double y(double value) const { return kTop + kPlotHeight - value / y_max * kPlotHeight; }
};

std::string number(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

void write_frame(XmlWriter& xml, const ScalingCurve& curve, const Axes& axes) {
  xml.leaf(
      "rect",
      {{"class", "plot"}, {"x", px(kLeft)}, {"y", px(kTop)}, {"width", px(kPlotWidth)}, {"height", px(kPlotHeight)}});
  for (double value = 0; value <= axes.y_max; value += axes.y_step) {
    const double y = axes.y(value);
    xml.leaf("line",
             {{"class", "gridline"}, {"x1", px(kLeft)}, {"x2", px(kLeft + kPlotWidth)}, {"y1", px(y)}, {"y2", px(y)}});
    xml.leaf("text", {{"x", px(kLeft - 6)}, {"y", px(y + 4)}, {"class", "yl"}}, number(value, "%.0f"));
  }
  for (const ScalingPoint& p : curve.points) {
    xml.leaf("text", {{"x", px(axes.x(p.gpus))}, {"y", px(kTop + kPlotHeight + 16)}, {"class", "tick"}},
             std::to_string(p.gpus));
  }
  if (curve.job_gpus > 0) {
    const double x = axes.x(curve.job_gpus);
    xml.leaf("line",
             {{"class", "job"}, {"x1", px(x)}, {"x2", px(x)}, {"y1", px(kTop)}, {"y2", px(kTop + kPlotHeight)}});
    xml.leaf("text", {{"x", px(x + 4)}, {"y", px(kTop + 12)}, {"class", "jobl"}}, "this job");
  }
  xml.leaf("text", {{"x", px(kLeft + kPlotWidth / 2)}, {"y", px(kTop + kPlotHeight + 36)}, {"class", "tick"}}, "GPUs");
  xml.leaf("text",
           {{"x", "14"},
            {"y", px(kTop + kPlotHeight / 2)},
            {"class", "ylabel"},
            {"transform", "rotate(-90 14 " + px(kTop + kPlotHeight / 2) + ")"}},
           "images/s");
}

void write_line(XmlWriter& xml, const ScalingCurve& curve, const Axes& axes, size_t s) {
  const std::string color = kLineColors[s % kLineColors.size()];
  std::string d;
  for (const ScalingPoint& p : curve.points) {
    d += (d.empty() ? "M" : "L") + px(axes.x(p.gpus)) + " " + px(axes.y(p.images_per_s[s]));
  }
  // The chosen plan is one of the others at each count: a wide pale line under them.
  const bool chosen = s == kChosenSeries;
  xml.leaf("path", {{"class", chosen ? "line chosen" : "line"}, {"d", d}, {"stroke", color}});
  for (const ScalingPoint& p : curve.points) {
    const bool hollow = s == kSearchSeries && p.layerwise_fell_back;
    xml.titled("circle",
               {{"class", "point"},
                {"cx", px(axes.x(p.gpus))},
                {"cy", px(axes.y(p.images_per_s[s]))},
                {"r", chosen ? "7" : "4"},
                {"fill", hollow ? "#ffffff" : color},
                {"fill-opacity", chosen ? "0.45" : "1"},
                {"stroke", color},
                {"data-strategy", curve.strategies[s]},
                {"data-gpus", std::to_string(p.gpus)},
                {"data-images-per-s", number(p.images_per_s[s], "%.6g")}},
               curve.strategies[s] + (chosen ? " (" + p.chosen + ")" : "") + " on " + std::to_string(p.gpus) +
                   " GPUs: " + number(p.images_per_s[s], "%.1f") + " images/s" +
                   (hollow ? " (no searched plan: the chosen plan stands in)" : ""));
  }
  const double y = kTop + 10 + static_cast<double>(s) * 20;
  xml.leaf("rect", {{"x", px(kLeft + kPlotWidth + 20)},
                    {"y", px(y - 9)},
                    {"width", "14"},
                    {"height", "10"},
                    {"fill", color},
                    {"fill-opacity", chosen ? "0.4" : "1"}});
  xml.leaf("text", {{"x", px(kLeft + kPlotWidth + 40)}, {"y", px(y)}}, curve.strategies[s]);
}

}  // namespace

void write_scaling_chart(XmlWriter& xml, const ScalingCurve& curve) {
  Axes axes;
  if (!curve.points.empty()) {
    axes.log_min = std::log2(static_cast<double>(curve.points.front().gpus));
    axes.log_max = std::log2(static_cast<double>(curve.points.back().gpus));
  }
  double top = 0;
  for (const ScalingPoint& p : curve.points) {
    for (const double v : p.images_per_s) top = std::max(top, v);
  }
  // Gridlines at 1, 2 or 5 times a power of ten, about five of them.
  const double raw = top > 0 ? top / 5 : 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  axes.y_step = raw / power <= 2 ? 2 * power : raw / power <= 5 ? 5 * power : 10 * power;
  axes.y_max = std::ceil(top * 1.02 / axes.y_step) * axes.y_step;
  if (axes.y_max <= 0) axes.y_max = axes.y_step;
  const double width = kLeft + kPlotWidth + kLegendWidth;
  const double height = kTop + kPlotHeight + kBottom;
  xml.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "scaling"},
                   {"width", px(width)},
                   {"height", px(height)},
                   {"viewBox", "0 0 " + px(width) + " " + px(height)}});
  write_frame(xml, curve, axes);
  if (!curve.points.empty()) {
    // The layer-wise search last, on top: a baseline equal to it would hide it.
    for (size_t s = 0; s < curve.strategies.size(); ++s) {
      if (s != kSearchSeries) write_line(xml, curve, axes, s);
    }
    if (kSearchSeries < curve.strategies.size()) write_line(xml, curve, axes, kSearchSeries);
  }
  xml.close();
}

}  // namespace layerplan::report
