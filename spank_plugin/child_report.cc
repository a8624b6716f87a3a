#include "spank_plugin/child_report.h"

#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace layerplan::spank {

namespace {

constexpr size_t kHeaderBytes = 5;
// Room kept for the frames after the explain table (timings, end).
constexpr size_t kTailReserve = 256;

void put_frame(std::string& out, char tag, const std::string& value) {
  const size_t n = value.size() < kMaxFieldBytes ? value.size() : kMaxFieldBytes;
  out += tag;
  for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((n >> shift) & 0xffU);
  out.append(value, 0, n);
}

[[noreturn]] void garbage(const std::string& why) { throw std::runtime_error("malformed report: " + why); }

double parse_ms(const std::string& text, size_t& pos) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str() + pos, &end);
  if (end == text.c_str() + pos || !(value >= 0.0 && value < 1e9)) garbage("bad timings");
  pos = static_cast<size_t>(end - text.c_str());
  return value;
}

void apply_frame(ChildReport& report, char tag, std::string value) {
  switch (tag) {
    case 'E':
      report.error = std::move(value);
      return;
    case 'P':
      report.plan_path = std::move(value);
      return;
    case 'V': {
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) garbage("environment entry without NAME=");
      report.environment.emplace_back(value.substr(0, eq), value.substr(eq + 1));
      return;
    }
    case 'S':
      report.summary = std::move(value);
      return;
    case 'W':
      report.warning = std::move(value);
      return;
    case 'X':
      report.explain.push_back(std::move(value));
      return;
    case 'O':
      report.origin = std::move(value);
      return;
    case 'T': {
      size_t pos = 0;
      report.plan_ms = parse_ms(value, pos);
      report.write_ms = parse_ms(value, pos);
      return;
    }
    default: {
      char what[48];
      std::snprintf(what, sizeof what, "unknown frame tag 0x%02x", static_cast<unsigned char>(tag));
      garbage(what);
    }
  }
}

}  // namespace

std::string encode_child_report(const ChildReport& report) {
  std::string out;
  if (!report.error.empty()) {
    put_frame(out, 'E', report.error);
    put_frame(out, 'Z', "");
    return out;
  }
  put_frame(out, 'P', report.plan_path);
  for (const auto& [name, value] : report.environment) put_frame(out, 'V', name + "=" + value);
  put_frame(out, 'S', report.summary);
  if (!report.origin.empty()) put_frame(out, 'O', report.origin);
  if (!report.warning.empty()) put_frame(out, 'W', report.warning);
  for (const std::string& line : report.explain) {
    if (out.size() + kHeaderBytes + line.size() + kTailReserve > kMaxReportBytes) break;
    put_frame(out, 'X', line);
  }
  char timings[64];
  std::snprintf(timings, sizeof timings, "%.3f %.3f", report.plan_ms, report.write_ms);
  put_frame(out, 'T', timings);
  put_frame(out, 'Z', "");
  return out;
}

ChildReport decode_child_report(const std::string& bytes) {
  if (bytes.size() > kMaxReportBytes) garbage("more than " + std::to_string(kMaxReportBytes) + " bytes");
  ChildReport report;
  size_t pos = 0;
  for (size_t frames = 0; frames < kMaxFrames; ++frames) {
    if (bytes.size() - pos < kHeaderBytes) garbage(pos == bytes.size() ? "no end frame" : "truncated frame header");
    const char tag = bytes[pos];
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) {
      length |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[pos + 1 + static_cast<size_t>(i)])) << (8 * i);
    }
    pos += kHeaderBytes;
    if (length > kMaxFieldBytes) garbage("a field of " + std::to_string(length) + " bytes");
    if (bytes.size() - pos < length) garbage("truncated frame");
    std::string value = bytes.substr(pos, length);
    pos += length;
    if (tag == 'Z') {
      if (length != 0 || pos != bytes.size()) garbage("bytes after the end frame");
      return report;
    }
    apply_frame(report, tag, std::move(value));
  }
  garbage("more than " + std::to_string(kMaxFrames) + " frames");
}

}  // namespace layerplan::spank
