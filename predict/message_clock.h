#pragma once
// The executor's messages in the order it sends them, all devices in step: each costs the
// link's time for a message of its size after the compute since the previous one (the
// busiest device's). Counts the messages, in all and per layer.
#include <cstddef>
#include <vector>

#include "predict/link_figures.h"
#include "predict/move_shape.h"

namespace layerplan {

class MessageClock {
 public:
  // `link` must outlive the clock; `layers` layers count messages.
  MessageClock(const LinkFigures& link, size_t layers) : link_(link), layer_messages_(layers, 0.0) {}

  // `seconds` more of computing before the next message.
  void compute(double seconds) { gap_ += seconds; }
  // The next message follows no compute (its sender finds its peer waiting).
  void forget_gap() { gap_ = 0; }

  // The time of a message of `bytes` (what the busiest rank sends in it) after the compute
  // gap, its bytes at the link's bandwidth aside, for layer `layer` (out of range: none).
  // Default shape: an exchange with one peer.
  double message(size_t layer, double bytes, const MoveShape& shape = {false, 1, {}});
  // The time of a ring step, at the small-message figure (its chunks overlap): after the
  // compute gap for the first step of a ring that waits for nothing else, else back to
  // back. Leaves the gap for the rings that start with it.
  double ring_step(bool after_gap);

  double messages() const { return messages_; }
  const std::vector<double>& layer_messages() const { return layer_messages_; }

 private:
  const LinkFigures& link_;
  double gap_ = 0;  // seconds of compute since the last message
  double messages_ = 0;
  std::vector<double> layer_messages_;
};

}  // namespace layerplan
