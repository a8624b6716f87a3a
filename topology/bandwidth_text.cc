#include "topology/bandwidth_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "common/error.h"
#include "common/text.h"

namespace layerplan {

namespace {

struct UnitWord {
  RateUnit unit;
  const char* name;
  double bits_per_s;
};

constexpr std::array<UnitWord, 6> kUnits = {{{RateUnit::kMbits, "Mb/s", 1e6},
                                             {RateUnit::kGbits, "Gb/s", 1e9},
                                             {RateUnit::kTbits, "Tb/s", 1e12},
                                             {RateUnit::kMbytes, "MB/s", 8e6},
                                             {RateUnit::kGbytes, "GB/s", 8e9},
                                             {RateUnit::kTbytes, "TB/s", 8e12}}};

const UnitWord& word_of(RateUnit unit) {
  for (const UnitWord& w : kUnits) {
    if (w.unit == unit) return w;
  }
  return kUnits[1];
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

const char* rate_unit_name(RateUnit unit) { return word_of(unit).name; }

double parse_bandwidth(std::string_view text, RateUnit unit, const std::string& name) {
  const std::string bad = name + " '" + clipped(text) +
                          "': expected a bandwidth: a positive number and one of Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s "
                          "(b bits, B bytes), e.g. 400Gb/s or 50GB/s; a bare number is " +
                          rate_unit_name(unit);
  const std::string_view body = trimmed(text);
  // Digits and a point only: from_chars would also take "inf", "nan", hex and exponents.
  const size_t number_end = body.find_first_not_of("0123456789.");
  const std::string_view number = body.substr(0, number_end);
  double value = 0.0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  require(!number.empty() && error == std::errc() && end == number.data() + number.size(), bad);
  require(std::isfinite(value) && value > 0, bad);
  const std::string_view suffix =
      number_end == std::string_view::npos ? std::string_view() : trimmed(body.substr(number_end));
  if (suffix.empty()) return value;
  for (const UnitWord& w : kUnits) {
    if (suffix == w.name) {
      const double converted = value * w.bits_per_s / word_of(unit).bits_per_s;
      require(std::isfinite(converted) && converted > 0, bad);
      return converted;
    }
  }
  throw UsageError(bad);
}

}  // namespace layerplan
