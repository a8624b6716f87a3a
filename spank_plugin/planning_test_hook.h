#pragma once
// A way for the plugin's tests to make the planning child misbehave: crash, hang, spin,
// eat memory or send garbage, as a bug or hostile input would. Compiled in only with
// LAYERPLAN_TEST_HOOKS (the test build of the plugin, spank_layerplan_testing.so); in
// the real plugin planning_test_hook() does nothing.
#include <optional>
#include <string>

namespace layerplan::spank {

// Runs in the planning child before it plans. With LAYERPLAN_TEST_HOOKS and
// $LAYERPLAN_TEST_PLANNING set in the process (not the job's) environment: "segv" (a
// stack overflow), "sleep", "spin", "alloc" (until the address-space limit), "garbage" or
// "flood" (returned as the child's output instead of a report). Else nullopt.
std::optional<std::string> planning_test_hook();

}  // namespace layerplan::spank
