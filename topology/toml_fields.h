#pragma once
// Typed reads of TOML values for the cluster file and the admin config: each failure is a
// UsageError that starts with "PATH:LINE:COLUMN: " and names the key.
// toml++ is compiled in header-only (CMakeLists.txt), without its internal assertions in
// every build, as Debian's shared build of it was: toml++ 3.3 has assertions that input
// reaches (docs/testing.md, "What the fuzz targets found").
#ifndef TOML_ASSERT
#define TOML_ASSERT(expr) static_cast<void>(0)
#endif
#include <toml++/toml.h>

#include <string>
#include <vector>

#include "topology/bandwidth_text.h"

namespace layerplan {

std::string toml_position(const std::string& path, const toml::source_region& at);  // "PATH:LINE:COL"

// Parses the whole file, read through common/input_file.h (a regular file of at most
// kMaxTextInputBytes); a syntax error names its position, an unreadable file says
// "<what> 'PATH' cannot be read: REASON".
toml::table parse_toml_file(const std::string& path, const std::string& what);
// The same for text already in memory; `path` names it in errors.
toml::table parse_toml_text(const std::string& text, const std::string& path);

double read_number(const toml::node& node, const std::string& path, const std::string& key);
int read_int(const toml::node& node, const std::string& path, const std::string& key);  // 0 … 2^20
std::string read_string(const toml::node& node, const std::string& path, const std::string& key);
std::vector<std::string> read_string_array(const toml::node& node, const std::string& path, const std::string& key);
bool read_bool(const toml::node& node, const std::string& path, const std::string& key);
// A bandwidth key: a number, in the `unit` the key is named for, or a string with a unit
// ("400Gb/s", "50 GB/s": topology/bandwidth_text.h), converted to `unit`.
double read_bandwidth(const toml::node& node, const std::string& path, const std::string& key, RateUnit unit);

// Runs `read` for the value at `node`; a UsageError it throws without a position gets
// "PATH:LINE:COL: TABLE.KEY: " put in front.
template <typename Read>
void at_position(const toml::node& node, const std::string& path, const std::string& qualified_key, Read&& read);

std::string format_number(double value);  // shortest form: 0.76, 100, 1e+30

// Range checks for values read from files or flags: UsageError "NAME = VALUE: expected …".
void require_positive(double value, const std::string& name);
void require_non_negative(double value, const std::string& name);
void require_fraction(double value, const std::string& name);  // (0, 1]

}  // namespace layerplan

#include "topology/toml_fields_inl.h"
