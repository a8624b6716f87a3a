#include "spank_plugin/output_text.h"

#include <cstdio>

namespace layerplan::spank {

namespace {

bool is_c0(unsigned char c) { return c < 0x20 || c == 0x7f; }

// A C1 control in UTF-8: 0xC2 followed by 0x80..0x9F.
bool is_c1_at(std::string_view text, size_t i) {
  return static_cast<unsigned char>(text[i]) == 0xc2 && i + 1 < text.size() &&
         static_cast<unsigned char>(text[i + 1]) >= 0x80 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    char escaped[8];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_c0(c)) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else if (is_c1_at(text, i)) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += escaped;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool has_control_characters(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (is_c0(static_cast<unsigned char>(text[i])) || is_c1_at(text, i)) return true;
  }
  return false;
}

}  // namespace layerplan::spank
