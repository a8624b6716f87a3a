#pragma once
// Which layerplan this is: the project's version and the git commit it was built from
// (cmake/write_version.cmake writes both at build time). `layerplan --version` prints them,
// and plan files, checkpoints and reports record them.
#include <string>
#include <string_view>

namespace layerplan {

std::string_view layerplan_version();  // "0.1.0"
std::string_view layerplan_commit();   // 12 hex digits, "+modified" after them for a changed tree, or "unknown"
// "layerplan 0.1.0 (commit 0123456789ab)".
std::string version_line();

}  // namespace layerplan
