#include "planner/deadline.h"

#include <utility>

namespace layerplan {

Deadline::Deadline(std::optional<Clock::time_point> at, ReadClock clock) : at_(at), clock_(std::move(clock)) {}

bool Deadline::passed() {
  pending_ = 0;
  if (!at_) return false;
  return (clock_ ? clock_() : Clock::now()) > *at_;
}

void Deadline::check() {
  if (passed()) throw DeadlinePassed{};
}

}  // namespace layerplan
