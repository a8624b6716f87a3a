#include "spank_plugin/planning_test_hook.h"

#ifdef LAYERPLAN_TEST_HOOKS
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>
#endif

namespace layerplan::spank {

#ifdef LAYERPLAN_TEST_HOOKS
namespace {

// Recurses until the stack runs out (the depth limit is never reached); the volatile frame
// keeps it from becoming a loop.
int overflow_stack(long depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == std::numeric_limits<long>::max()) return frame[0];
  return overflow_stack(depth + 1) + frame[0];
}

}  // namespace

std::optional<std::string> planning_test_hook() {
  const char* what = std::getenv("LAYERPLAN_TEST_PLANNING");
  if (what == nullptr) return std::nullopt;
  const std::string hook = what;
  if (hook == "segv") return std::to_string(overflow_stack(0));
  if (hook == "sleep") {
    for (;;) ::pause();
  }
  if (hook == "spin") {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1UL;
  }
  if (hook == "alloc") {
    std::vector<char*> kept;
    for (;;) {
      char* block = new char[size_t{64} << 20];
      std::memset(block, 1, size_t{64} << 20);
      kept.push_back(block);
    }
  }
  if (hook == "garbage")
    return std::string(
        "\x7f"
        "ELF not a report");
  if (hook == "flood") return std::string(size_t{3} << 20, 'x');
  return std::nullopt;
}
#else
std::optional<std::string> planning_test_hook() { return std::nullopt; }
#endif

}  // namespace layerplan::spank
