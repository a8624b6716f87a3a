#pragma once
// Reading the JSON of model and plan files, which come from users: parsing that turns
// every failure of the parser into one UsageError naming the file, and typed reads of
// fields whose errors name the field, its value (shortened) and what was expected, so
// that no value is silently truncated (an int read of 2^40) and no error line quotes a
// whole subtree of the file. Only model/*.cc include it: nlohmann::json stays private.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace layerplan {

// The JSON document `text`; `label` names it ("plan file 'p.json'"). Throws UsageError
// "LABEL: not JSON (...)" for a syntax error (by byte position only: the SPANK plugin may
// read a file its user cannot), a number too large for a double, or nesting deeper than
// kMaxJsonDepth.
nlohmann::json parse_json_input(const std::string& text, const std::string& label);

// A JSON value as an error message shows it: numbers, booleans and null as written,
// strings quoted and shortened to 60 characters, arrays and objects by what they are
// ("an array of 3 entries", "an object").
std::string describe_json(const nlohmann::json& value);

// The integer `value` when it is one in [lo, hi]; else UsageError
// "WHERE: NAME VALUE: expected an integer from LO to HI".
int64_t json_integer(const nlohmann::json& value, const std::string& where, const std::string& name, int64_t lo,
                     int64_t hi);

// The string `value`; else UsageError "WHERE: NAME VALUE: expected a string".
std::string json_string(const nlohmann::json& value, const std::string& where, const std::string& name);

// The finite number `value`; else UsageError "WHERE: NAME VALUE: expected a number".
double json_number(const nlohmann::json& value, const std::string& where, const std::string& name);

}  // namespace layerplan
