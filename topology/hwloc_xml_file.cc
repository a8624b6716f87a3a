#include "topology/hwloc_xml_file.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace layerplan {

namespace {

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_spaces(std::string_view text, size_t at) {
  while (at < text.size() && is_xml_space(text[at])) ++at;
  return at;
}

// A start tag's attributes, read as XML reads them (and so both of hwloc's XML backends):
// any whitespace between attributes and around '=', either quote, '>' allowed inside a value.
struct StartTag {
  std::vector<std::pair<std::string_view, std::string_view>> attributes;
  size_t end = 0;  // one past the tag's '>'

  const std::string_view* find(std::string_view name) const {
    for (const auto& [key, value] : attributes) {
      if (key == name) return &value;
    }
    return nullptr;
  }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  std::string_view value(std::string_view name) const {
    const std::string_view* found = find(name);
    return found == nullptr ? std::string_view() : *found;
  }
};

bool ends_name(char c) { return is_xml_space(c) || c == '=' || c == '>' || c == '/' || c == '<'; }

// Reads `name = "value"` at `at` into `tag`; the position after it, or npos when it is not
// well-formed.
size_t read_attribute(std::string_view text, size_t at, StartTag& tag) {
  const size_t name_start = at;
  while (at < text.size() && !ends_name(text[at])) ++at;
  const std::string_view name = text.substr(name_start, at - name_start);
  at = skip_spaces(text, at);
  if (name.empty() || at >= text.size() || text[at] != '=') return std::string_view::npos;
  at = skip_spaces(text, at + 1);
  if (at >= text.size() || (text[at] != '"' && text[at] != '\'')) return std::string_view::npos;
  const size_t close = text.find(text[at], at + 1);
  if (close == std::string_view::npos) return std::string_view::npos;
  tag.attributes.emplace_back(name, text.substr(at + 1, close - at - 1));
  return close + 1;
}

// The start tag whose element name ends at `at`; nullopt when it is not well-formed (an
// attribute without '=' or a quoted value, no closing '>'). Reads only up to the tag's end,
// so that scanning a whole export stays linear in its size.
std::optional<StartTag> read_start_tag(std::string_view text, size_t at) {
  StartTag tag;
  for (at = skip_spaces(text, at); at < text.size(); at = skip_spaces(text, at)) {
    if (text[at] == '>' || text.substr(at, 2) == "/>") {
      tag.end = at + (text[at] == '>' ? 1 : 2);
      return tag;
    }
    at = read_attribute(text, at, tag);
    if (at == std::string_view::npos) return std::nullopt;
  }
  return std::nullopt;
}

size_t line_of(std::string_view text, size_t at) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

[[noreturn]] void refuse_tag(std::string_view text, size_t at, const std::string& path, const std::string& element) {
  throw UsageError("'" + path + "' is malformed hwloc XML: the <" + element + "> tag on line " +
                   std::to_string(line_of(text, at)) +
                   " is not well-formed (expected name=\"value\" attributes and a closing '>')");
}

// The next start tag of `element` at or after `from` (npos when none): its position and tag.
std::optional<std::pair<size_t, StartTag>> next_tag(std::string_view text, size_t from, const std::string& element,
                                                    const std::string& path) {
  const std::string open = "<" + element;
  for (size_t at = text.find(open, from); at != std::string_view::npos; at = text.find(open, at + open.size())) {
    const size_t name_end = at + open.size();
    if (name_end < text.size() && !ends_name(text[name_end])) continue;  // <objects, another element
    std::optional<StartTag> tag = read_start_tag(text, name_end);
    if (!tag) refuse_tag(text, at, path, element);
    return std::make_pair(at, std::move(*tag));
  }
  return std::nullopt;
}

// hwloc 2.9 dereferences a null bitmap while loading an object that has a cpuset but no
// complete_cpuset (or a nodeset but no complete_nodeset): refuse such objects before it sees them.
void check_complete_sets(const StartTag& tag, const std::string& path) {
  for (const std::string_view set_name : {"cpuset", "nodeset"}) {
    const std::string set(set_name);
    if (tag.has(set) && !tag.has("complete_" + set)) {
      throw UsageError("'" + path + "' is malformed hwloc XML: the object with gp_index " +
                       clipped(tag.value("gp_index")) + " has a " + set + " but no complete_" + set +
                       ", which hwloc 2.9 cannot import");
    }
  }
}

// hwloc 2.9 sets bit os_index of a bitmap for every PU and NUMA node: a missing os_index (2^32 - 1
// to hwloc) or a huge one made it allocate 512 MiB for a 40 KB export. 2^20 CPUs or NUMA nodes
// is far beyond any machine (Linux supports 8192), and a bitmap of 128 KiB.
constexpr uint64_t kMaxOsIndex = (uint64_t{1} << 20) - 1;

void check_os_index(const StartTag& tag, const std::string& path) {
  const std::string_view type = tag.value("type");
  if (type != "PU" && type != "NUMANode") return;
  const std::string_view index = tag.value("os_index");
  uint64_t value = 0;
  bool valid = !index.empty() && index.size() <= 7;
  for (const char c : index) {
    valid = valid && c >= '0' && c <= '9';
    if (valid) value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!valid || value > kMaxOsIndex) {
    throw UsageError("'" + path + "' is malformed hwloc XML: the " + std::string(type) + " with gp_index " +
                     clipped(tag.value("gp_index")) + " has os_index '" + clipped(index) + "' (expected 0 to " +
                     std::to_string(kMaxOsIndex) + ", as lstopo writes for every " + std::string(type) + ")");
  }
}

// XML forbids an attribute twice, and libxml2 refuses it; hwloc's own XML backend keeps the
// last one, which could differ from the one the checks here read.
void check_no_repeated_attributes(const StartTag& tag, const std::string& path) {
  for (const std::string_view name : {"type", "os_index", "cpuset", "complete_cpuset", "nodeset", "complete_nodeset"}) {
    const auto count = std::count_if(tag.attributes.begin(), tag.attributes.end(),
                                     [&](const auto& attribute) { return attribute.first == name; });
    if (count > 1) {
      throw UsageError("'" + path + "' is malformed hwloc XML: the object with gp_index " +
                       clipped(tag.value("gp_index")) + " has " + std::string(name) + " twice");
    }
  }
}

void check_objects(std::string_view text, const std::string& path) {
  for (auto found = next_tag(text, 0, "object", path); found;
       found = next_tag(text, found->second.end, "object", path)) {
    check_no_repeated_attributes(found->second, path);
    check_complete_sets(found->second, path);
    check_os_index(found->second, path);
  }
}

// Entities and DTD declarations of the export's own could hide an object from the checks
// above (hwloc's libxml2 backend expands entities, and an object inside one crashed it) or
// add attributes to every object. lstopo writes none of them: only the five predefined
// entities and character references are accepted.
void check_no_entities(std::string_view text, const std::string& path) {
  for (const std::string_view declaration : {"<!ENTITY", "<!ATTLIST"}) {
    const size_t at = text.find(declaration);
    if (at != std::string_view::npos) {
      throw UsageError("'" + path + "' is malformed hwloc XML: line " + std::to_string(line_of(text, at)) +
                       " declares " + std::string(declaration) +
                       ", which lstopo never writes (expected an export without a DTD of its own)");
    }
  }
  for (size_t at = text.find('&'); at != std::string_view::npos; at = text.find('&', at + 1)) {
    const std::string_view rest = text.substr(at + 1, 5);
    bool predefined = rest.substr(0, 1) == "#";
    for (const std::string_view name : {"amp;", "lt;", "gt;", "quot;", "apos;"})
      predefined |= rest.substr(0, name.size()) == name;
    if (!predefined) {
      throw UsageError(
          "'" + path + "' is malformed hwloc XML: line " + std::to_string(line_of(text, at)) +
          " refers to an entity (expected only &amp; &lt; &gt; &quot; &apos; and &#...; as lstopo writes)");
    }
  }
}

bool is_bitmap_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' || c == ',' || c == '.';
}

bool is_bitmap_word(std::string_view word) {
  if (word.substr(0, 2) != "0x" || word.size() < 3 || word.size() > 10) return false;
  return word.find_first_of("x.", 2) == std::string_view::npos;
}

// hwloc's bitmap syntax as lstopo writes it: 32-bit words ("0x" and 1 to 8 hex digits) separated
// by commas, highest first, an all-zero word between others left empty ("0x00000001,,0x0"), the
// first word "0xf...f" for an infinite set.
bool is_bitmap(std::string_view v) {
  if (v.empty() || v.front() == ',' || v.back() == ',') return false;
  for (size_t start = 0, word = 0; start <= v.size(); ++word) {
    const size_t comma = std::min(v.find(',', start), v.size());
    const std::string_view w = v.substr(start, comma - start);
    if (!w.empty() && !is_bitmap_word(w) && !(word == 0 && w == "0xf...f")) return false;
    start = comma + 1;
  }
  return true;
}

// hwloc 2.9 aborts (an assertion in hwloc_bitmap_sscanf) on some malformed bitmaps, e.g. a
// cpuset starting with a comma: every attribute whose name ends with cpuset or nodeset, in any
// element (objects, cpukinds, memory attributes), must be a bitmap as lstopo writes it. Each
// value is read only while it looks like one, so the scan stays linear.
void check_bitmaps(std::string_view text, const std::string& path) {
  for (const std::string_view suffix : {"cpuset", "nodeset"}) {
    for (size_t at = text.find(suffix); at != std::string_view::npos; at = text.find(suffix, at + suffix.size())) {
      size_t open = skip_spaces(text, at + suffix.size());
      if (open >= text.size() || text[open] != '=') continue;
      open = skip_spaces(text, open + 1);
      if (open >= text.size() || (text[open] != '"' && text[open] != '\'')) continue;
      size_t end = open + 1;
      while (end < text.size() && is_bitmap_char(text[end])) ++end;
      if (end < text.size() && text[end] == text[open] && is_bitmap(text.substr(open + 1, end - open - 1))) continue;
      const size_t shown = end - open - (end < text.size() && text[end] != text[open] ? 0 : 1);
      throw UsageError("'" + path + "' is malformed hwloc XML: line " + std::to_string(line_of(text, at)) + " has " +
                       std::string(suffix) + " '" + clipped(text.substr(open + 1, std::min<size_t>(shown, 61))) +
                       "' (expected an hwloc bitmap, such as 0x000000ff,0xffffffff, as lstopo writes)");
    }
  }
}

// The major version of a "MAJOR.MINOR" string (digits only read; large values stop at 1000).
int major_version(std::string_view version) {
  int major = 0;
  for (char c : version) {
    if (c < '0' || c > '9' || major >= 1000) break;
    major = major * 10 + (c - '0');
  }
  return major;
}

}  // namespace

std::string read_hwloc_xml_file(const std::string& path) {
  std::string text = read_input_file(path, "hwloc XML file '" + path + "'", kMaxHwlocXmlBytes);
  check_hwloc_xml_text(text, path);
  return text;
}

void check_hwloc_xml_text(const std::string& text, const std::string& path) {
  const auto topology = next_tag(text, 0, "topology", path);
  if (!topology) {
    throw UsageError("'" + path +
                     "' is not an hwloc XML export: no <topology> element (expected the output of "
                     "`lstopo FILE.xml`)");
  }
  const std::string_view version = topology->second.value("version");
  if (major_version(version) >= 3) {
    throw UsageError("'" + path + "' is an hwloc 3 export (<topology version=\"" + clipped(version) +
                     "\">), which hwloc 2.9 cannot import: re-export it with `lstopo --of v2xml FILE.xml` on the "
                     "machine's hwloc");
  }
  const size_t last = text.find_last_not_of(" \t\r\n");
  const std::string closing = "</topology>";
  if (last == std::string::npos || last + 1 < closing.size() ||
      text.compare(last + 1 - closing.size(), closing.size(), closing) != 0) {
    throw UsageError("'" + path + "' is malformed hwloc XML: it does not end with </topology> (a truncated file?)");
  }
  check_no_entities(text, path);
  check_bitmaps(text, path);
  check_objects(text, path);
}

}  // namespace layerplan
