#pragma once
// The instant a plan must be finished by (PlanOptions::time_budget_s), checked from every
// loop of the planner that can run long: enumerating configurations, filling cost tables,
// the elimination search. A loop charges the work it does (one unit is about one table
// entry, a tile priced or a min-plus term: a few nanoseconds); the clock is read once per
// kWorkPerRead units, so a passed deadline is noticed within microseconds of work wherever
// the time goes, at the price of one clock read per thousands of units.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace layerplan {

// Thrown by Deadline once it has passed; make_plan() catches it and falls back to a baseline.
struct DeadlinePassed {};

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  // What reads the time: Clock::now, or in tests a clock of their own.
  using ReadClock = std::function<Clock::time_point()>;
  static constexpr int64_t kWorkPerRead = int64_t{1} << 12;

  Deadline() = default;  // never passes
  explicit Deadline(std::optional<Clock::time_point> at, ReadClock clock = {});

  // Counts `work` units; once kWorkPerRead have gathered, reads the clock and throws
  // DeadlinePassed if the deadline has passed.
  void charge(int64_t work = 1) {
    if (!at_) return;
    pending_ += work;
    if (pending_ >= kWorkPerRead) check();
  }
  // Reads the clock now; throws DeadlinePassed if the deadline has passed.
  void check();
  bool passed();  // reads the clock now
  bool set() const { return at_.has_value(); }
  std::optional<Clock::time_point> at() const { return at_; }

 private:
  std::optional<Clock::time_point> at_;
  ReadClock clock_;
  int64_t pending_ = 0;
};

}  // namespace layerplan
