#include "report/split_colors.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace layerplan::report {

namespace {

struct Rgb {
  double r, g, b;
};
constexpr std::array<Rgb, kNumDims> kDimColors = {{
    {78, 121, 167},   // n: blue
    {242, 142, 43},   // c: orange
    {89, 161, 79},    // h: green
    {176, 122, 161},  // w: purple
}};
constexpr Rgb kOneDevice = {186, 176, 172};

std::string hex(const Rgb& c) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", static_cast<int>(std::lround(c.r)),
                static_cast<int>(std::lround(c.g)), static_cast<int>(std::lround(c.b)));
  return text;
}

}  // namespace

std::string split_color(const Degrees& degrees) {
  Rgb mix{0, 0, 0};
  double total = 0;
  for (int dim = 0; dim < kNumDims; ++dim) {
    const double weight = std::log2(static_cast<double>(degrees[dim]));
    if (weight <= 0) continue;
    const Rgb& c = kDimColors[static_cast<size_t>(dim)];
    mix = {mix.r + weight * c.r, mix.g + weight * c.g, mix.b + weight * c.b};
    total += weight;
  }
  if (total == 0) return hex(kOneDevice);
  return hex({mix.r / total, mix.g / total, mix.b / total});
}

void write_split_legend(XmlWriter& xml) {
  struct Entry {
    Degrees degrees;
    const char* label;
  };
  const std::array<Entry, 6> entries = {{{{{4, 1, 1, 1}}, "n: samples"},
                                         {{{1, 4, 1, 1}}, "c: channels"},
                                         {{{1, 1, 4, 1}}, "h: height"},
                                         {{{1, 1, 1, 4}}, "w: width"},
                                         {{{4, 4, 1, 1}}, "n4 c4: a mix"},
                                         {{{1, 1, 1, 1}}, "one device"}}};
  xml.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "legend"},
                   {"width", "760"},
                   {"height", "24"},
                   {"role", "img"}});
  double x = 0;
  for (const Entry& e : entries) {
    xml.leaf("rect", {{"x", px(x)}, {"y", "4"}, {"width", "16"}, {"height", "16"}, {"fill", split_color(e.degrees)}});
    xml.leaf("text", {{"x", px(x + 22)}, {"y", "17"}}, e.label);
    x += 126;
  }
  xml.close();
}

}  // namespace layerplan::report
