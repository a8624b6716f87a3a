#include "common/text.h"

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

}  // namespace layerplan
