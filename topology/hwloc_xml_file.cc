#include "topology/hwloc_xml_file.h"

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace layerplan {

namespace {

// The value of `attribute` inside the tag that starts at `tag` ("" when absent).
std::string attribute_value(const std::string& text, size_t tag, const std::string& attribute) {
  const size_t end = text.find('>', tag);
  if (end == std::string::npos) return "";
  const std::string element = text.substr(tag, end - tag);
  const size_t at = element.find(" " + attribute + "=");
  if (at == std::string::npos) return "";
  const size_t open = at + attribute.size() + 2;
  if (open >= element.size() || (element[open] != '"' && element[open] != '\'')) return "";
  const size_t close = element.find(element[open], open + 1);
  if (close == std::string::npos) return "";
  return element.substr(open + 1, close - open - 1);
}

bool has_attribute(const std::string& element, const std::string& attribute) {
  return element.find(" " + attribute + "=") != std::string::npos;
}

// hwloc 2.9 dereferences a null bitmap while loading an object that has a cpuset but no
// complete_cpuset (or a nodeset but no complete_nodeset): refuse such objects before it sees them.
void check_complete_sets(const std::string& text, const std::string& path) {
  for (size_t tag = text.find("<object"); tag != std::string::npos; tag = text.find("<object", tag + 1)) {
    const size_t end = text.find('>', tag);
    const std::string element = text.substr(tag, end == std::string::npos ? std::string::npos : end - tag);
    for (const char* set : {"cpuset", "nodeset"}) {
      if (has_attribute(element, set) && !has_attribute(element, std::string("complete_") + set)) {
        throw UsageError("'" + path + "' is malformed hwloc XML: the object with gp_index " +
                         clipped(attribute_value(text, tag, "gp_index")) + " has a " + set + " but no complete_" + set +
                         ", which hwloc 2.9 cannot import");
      }
    }
  }
}

}  // namespace

std::string read_hwloc_xml_file(const std::string& path) {
  std::string text = read_input_file(path, "hwloc XML file '" + path + "'", kMaxHwlocXmlBytes);
  check_hwloc_xml_text(text, path);
  return text;
}

void check_hwloc_xml_text(const std::string& text, const std::string& path) {
  const size_t tag = text.find("<topology");
  if (tag == std::string::npos) {
    throw UsageError("'" + path +
                     "' is not an hwloc XML export: no <topology> element (expected the output of "
                     "`lstopo FILE.xml`)");
  }
  const std::string version = attribute_value(text, tag, "version");
  if (!version.empty()) {
    int major = 0;
    for (char c : version) {
      if (c < '0' || c > '9') break;
      major = major * 10 + (c - '0');
    }
    if (major >= 3) {
      throw UsageError("'" + path + "' is an hwloc 3 export (<topology version=\"" + clipped(version) +
                       "\">), which hwloc 2.9 cannot import: re-export it with `lstopo --of v2xml FILE.xml` on the "
                       "machine's hwloc");
    }
  }
  const size_t last = text.find_last_not_of(" \t\r\n");
  const std::string closing = "</topology>";
  if (last == std::string::npos || last + 1 < closing.size() ||
      text.compare(last + 1 - closing.size(), closing.size(), closing) != 0) {
    throw UsageError("'" + path + "' is malformed hwloc XML: it does not end with </topology> (a truncated file?)");
  }
  check_complete_sets(text, path);
}

}  // namespace layerplan
