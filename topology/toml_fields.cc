#include "topology/toml_fields.h"

#include <cmath>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"

namespace layerplan {

std::string toml_position(const std::string& path, const toml::source_region& at) {
  return path + ":" + std::to_string(at.begin.line) + ":" + std::to_string(at.begin.column);
}

toml::table parse_toml_file(const std::string& path, const std::string& what) {
  return parse_toml_text(read_input_file(path, what + " '" + path + "'", kMaxTextInputBytes), path);
}

toml::table parse_toml_text(const std::string& text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& err) {
    throw UsageError(toml_position(path, err.source()) + ": " + std::string(err.description()));
  }
}

double read_number(const toml::node& node, const std::string& path, const std::string& key) {
  if (auto v = node.value<double>(); v && (node.is_integer() || node.is_floating_point())) return *v;
  throw UsageError(toml_position(path, node.source()) + ": " + key + " must be a number");
}

int read_int(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* v = node.as_integer();
  if (!v) throw UsageError(toml_position(path, node.source()) + ": " + key + " must be an integer");
  const int64_t value = v->get();
  if (value < 0 || value > (1 << 20)) {
    throw UsageError(toml_position(path, node.source()) + ": " + key + " = " + std::to_string(value) +
                     " is out of range");
  }
  return static_cast<int>(value);
}

std::string read_string(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* v = node.as_string();
  if (!v) throw UsageError(toml_position(path, node.source()) + ": " + key + " must be a string");
  return v->get();
}

std::vector<std::string> read_string_array(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* array = node.as_array();
  if (!array) throw UsageError(toml_position(path, node.source()) + ": " + key + " must be an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *array) out.push_back(read_string(item, path, key + " entry"));
  return out;
}

bool read_bool(const toml::node& node, const std::string& path, const std::string& key) {
  const auto* v = node.as_boolean();
  if (!v) throw UsageError(toml_position(path, node.source()) + ": " + key + " must be true or false");
  return v->get();
}

double read_bandwidth(const toml::node& node, const std::string& path, const std::string& key, RateUnit unit) {
  if (node.is_string()) return parse_bandwidth(node.as_string()->get(), unit, key);
  if (node.is_integer() || node.is_floating_point()) return read_number(node, path, key);
  throw UsageError(toml_position(path, node.source()) + ": " + key + " must be a number (" + rate_unit_name(unit) +
                   ") or a string with a unit, e.g. \"400Gb/s\"");
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void require_positive(double value, const std::string& name) {
  require(std::isfinite(value) && value > 0, name + " = " + format_number(value) + ": expected a positive number");
}

void require_non_negative(double value, const std::string& name) {
  require(std::isfinite(value) && value >= 0, name + " = " + format_number(value) + ": expected zero or more");
}

void require_fraction(double value, const std::string& name) {
  require(value > 0 && value <= 1, name + " = " + format_number(value) + ": expected a fraction in (0, 1]");
}

}  // namespace layerplan
