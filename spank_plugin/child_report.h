#pragma once
// What the planning process (isolated_child.h) sends back to slurmstepd, and the framed
// bytes it travels in. The parent trusts nothing in them: decode_child_report() checks
// every frame's tag and length against fixed caps and throws on anything else, so a
// crashed, truncated or hostile child cannot make slurmstepd allocate, loop or print
// what it likes.
//
// Format: frames of [tag: 1 byte][length: 4 bytes, little-endian][length bytes], in any
// order, ending with the frame 'Z' of length 0. Tags: 'E' error, 'P' plan file path,
// 'V' NAME=VALUE for the task environment, 'S' summary, 'W' warning, 'X' one line of the
// explain table, 'T' timings ("PLAN_MS WRITE_MS"), 'O' where the plan came from.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace layerplan::spank {

struct ChildReport {
  std::string error;  // non-empty: the step fails with this reason (nothing else is set)
  std::string plan_path;
  std::vector<std::pair<std::string, std::string>> environment;
  std::string summary;
  std::string warning;
  std::vector<std::string> explain;
  double plan_ms = 0.0, write_ms = 0.0;
  std::string origin;  // "planned here", "plan from node 0 (host1)", ... (plan_once.h)
};

// Caps on what the parent accepts (more is garbage): the whole report, one field, and the
// number of frames (an explain table has one line per layer).
inline constexpr size_t kMaxReportBytes = size_t{1} << 20;
inline constexpr size_t kMaxFieldBytes = size_t{16} << 10;
inline constexpr size_t kMaxFrames = 8192;

// The report as frames; fields longer than kMaxFieldBytes are cut, and explain lines are
// dropped once the report would pass kMaxReportBytes.
std::string encode_child_report(const ChildReport& report);

// Parses `bytes`; throws std::runtime_error naming what is wrong (unknown tag, a length
// over the cap, a truncated frame, no end frame, a malformed environment entry).
ChildReport decode_child_report(const std::string& bytes);

}  // namespace layerplan::spank
