#include "job/device_profile.h"

#include "common/text.h"

namespace layerplan {

std::shared_ptr<const DeviceProfile> load_device_profile(const std::string& path, const Device& device,
                                                         Precision precision) {
  if (path.empty()) return nullptr;
  return std::make_shared<const DeviceProfile>(
      read_profile_db(path).for_device(device.model, precision_name(precision)));
}

int profiled_layers(const ModelGraph& graph, const StrategyCost& strategy, const DeviceProfile& profile) {
  // A GraphProfile that does not own the profile: it lives no longer than this call.
  const GraphProfile lookup(graph, std::shared_ptr<const DeviceProfile>(&profile, [](const DeviceProfile*) {}));
  int priced = 0;
  for (const Layer& layer : graph.layers()) {
    const auto id = static_cast<size_t>(layer.id);
    if (id < strategy.layers.size() && lookup.find(layer, strategy.layers[id].config) != nullptr) ++priced;
  }
  return priced;
}

std::string profile_note(const ModelGraph& graph, const StrategyCost& strategy, const DeviceProfile& profile) {
  const std::string file = "profile db '" + clipped(profile.source()) + "'";
  const std::string device = profile.device() + " (" + profile.precision() + ")";
  if (profile.size() == 0) {
    std::string held;
    for (const std::string& d : profile.file_devices()) held += (held.empty() ? "" : ", ") + d;
    return file + " holds no entries for " + device + "; it holds " + (held.empty() ? "none" : held) +
           ": every layer is priced by the compute model";
  }
  return file + ": " + std::to_string(profiled_layers(graph, strategy, profile)) + " of " +
         std::to_string(graph.size()) + " layers of the " + strategy.name + " plan priced by measured times (" +
         std::to_string(profile.size()) + " entries for " + device + ")";
}

}  // namespace layerplan
