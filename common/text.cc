#include "common/text.h"

#include <array>
#include <cctype>
#include <cstdio>

namespace layerplan {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace layerplan

namespace layerplan {

std::string clipped(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  size_t cut = max_chars;
  // Back off over UTF-8 continuation bytes (10xxxxxx) so no character is cut in half.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string speed_words(double times_faster) {
  std::array<char, 64> buffer{};
  if (times_faster >= 1.0) {
    std::snprintf(buffer.data(), buffer.size(), "%.2f\u00d7 faster", times_faster);
  } else {
    std::snprintf(buffer.data(), buffer.size(), "%.1f %% slower", 100.0 * (1.0 / times_faster - 1.0));
  }
  return buffer.data();
}

}  // namespace layerplan
