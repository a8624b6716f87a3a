#pragma once
// Small text helpers shared by the parsers of flags, environment variables and config values.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace layerplan {

// "a,,b" -> {"a", "", "b"}; "" -> {""}. Entries are not trimmed; empty ones are kept so
// that callers can refuse them.
std::vector<std::string> split_commas(const std::string& text);

// Text from input as an error message may quote it: at most `max_chars` bytes (cut at a
// UTF-8 character boundary), "..." added when cut. A message stays one short line whatever
// the file holds.
inline constexpr size_t kMaxQuotedChars = 60;
std::string clipped(std::string_view text, size_t max_chars = kMaxQuotedChars);

// `text` with ASCII letters in lower case: what names typed in any case are compared by.
std::string ascii_lower(std::string_view text);

// How much faster one step is than another, in words a reader cannot misread: "1.44× faster"
// when it is faster, "4.2 % slower" when it is not (where "0.96x faster" read as a gain).
// `times_faster` is the other step's time over this one's, > 0.
std::string speed_words(double times_faster);

}  // namespace layerplan
