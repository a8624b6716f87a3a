#include "predict/message_clock.h"

namespace layerplan {

double MessageClock::message(size_t layer, double bytes, const MoveShape& shape) {
  const double t =
      shape.one_way ? link_.gather_s(gap_, bytes, shape.peers) : link_.exchange_s(gap_, bytes, shape.peers);
  gap_ = 0;
  messages_ += 1;
  if (layer < layer_messages_.size()) layer_messages_[layer] += 1;
  return t;
}

double MessageClock::ring_step(bool after_gap) {
  messages_ += 1;
  return link_.message_s(after_gap ? gap_ : 0.0);
}

}  // namespace layerplan
