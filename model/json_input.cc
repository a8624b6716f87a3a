#include "model/json_input.h"

#include <cmath>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace layerplan {

using nlohmann::json;

json parse_json_input(const std::string& text, const std::string& label) {
  check_json_depth(text, label);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // Only the position: the parser's message quotes the text.
    throw UsageError(label + ": not JSON (syntax error at byte " + std::to_string(e.byte) + ")");
  } catch (const json::out_of_range&) {
    throw UsageError(label + ": not JSON that can be read (a number beyond the range of a double, such as 1e999)");
  } catch (const json::exception&) {
    throw UsageError(label + ": not JSON that can be read");
  }
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return "\"" + clipped(value.get_ref<const std::string&>()) + "\"";
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + (value.size() == 1 ? " entry" : " entries");
    case json::value_t::object:
      return "an object";
    case json::value_t::binary:
    case json::value_t::discarded:
      return "an unreadable value";
    default:
      return clipped(value.dump());  // a number, a boolean or null: short
  }
}

int64_t json_integer(const json& value, const std::string& where, const std::string& name, int64_t lo, int64_t hi) {
  // An unsigned integer above INT64_MAX is out of every range here: compare it unsigned.
  const bool in_range = (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                         static_cast<int64_t>(value.get<uint64_t>()) >= lo) ||
                        (value.is_number_integer() && !value.is_number_unsigned() && value.get<int64_t>() >= lo &&
                         value.get<int64_t>() <= hi);
  require(in_range, where + ": " + name + " " + describe_json(value) + ": expected an integer from " +
                        std::to_string(lo) + " to " + std::to_string(hi));
  return value.get<int64_t>();
}

std::string json_string(const json& value, const std::string& where, const std::string& name) {
  require(value.is_string(), where + ": " + name + " " + describe_json(value) + ": expected a string");
  return value.get<std::string>();
}

double json_number(const json& value, const std::string& where, const std::string& name) {
  require(value.is_number() && std::isfinite(value.get<double>()),
          where + ": " + name + " " + describe_json(value) + ": expected a number");
  return value.get<double>();
}

}  // namespace layerplan
