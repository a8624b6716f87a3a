#pragma once
// Reading an hwloc XML export from disk, with the checks hwloc 2.9 does not explain well:
// the file must exist, hold a <topology> element of format 2.x or older (hwloc 3 writes
// 3.0, which 2.9 rejects) and not be cut short. hwloc itself parses the rest, and says
// only "failed" (and prints to stderr) when it cannot; these checks catch the common
// cases first with a message that names the file.
#include <string>

namespace layerplan {

// The file's content. Throws UsageError for a missing or unreadable file, a file without
// a <topology> element, an hwloc 3 (or later) export, or a file that does not end with
// </topology>.
std::string read_hwloc_xml_file(const std::string& path);
// The same checks on text already in memory; `path` names it in errors.
void check_hwloc_xml_text(const std::string& text, const std::string& path);

}  // namespace layerplan
