#include "cli/memory_report.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "cli/text_format.h"

namespace layerplan {

namespace {

double gib(double bytes) { return bytes / static_cast<double>(int64_t{1} << 30); }

}  // namespace

std::string memory_runs_text(const PlanMemory& memory, int runs) {
  std::string text;
  const auto& d = memory.devices;
  const auto hundredths = [&](size_t i) { return std::llround(gib(static_cast<double>(d[i].peak)) * 100); };
  int printed = 0;
  for (size_t start = 0; start < d.size();) {
    size_t end = start + 1;
    while (end < d.size() && hundredths(end) == hundredths(start)) ++end;
    if (printed == runs) return text + ", ...";
    if (!text.empty()) text += ", ";
    text += end - start == 1 ? format("%zu", start) : format("%zu-%zu", start, end - 1);
    text += format(" %.2f", gib(static_cast<double>(d[start].peak)));
    ++printed;
    start = end;
  }
  return text;
}

void print_memory_report(std::ostream& out, const Plan& plan, const DeviceGraph& devices) {
  const Device& device = devices.device();
  out << "\nmemory per GPU, predicted peak in GiB";
  if (plan.usable_memory_bytes == std::numeric_limits<int64_t>::max()) {
    out << " (the GPU's memory is unknown: not checked)\n";
  } else {
    out << format(" (usable %.2f = %.2f less %.2f reserved)\n", gib(static_cast<double>(plan.usable_memory_bytes)),
                  gib(device.memory_bytes), gib(device.memory_reserve_bytes));
  }
  out << format("%-16s %10s %9s %9s  %s\n", "strategy", "step ms", "peak", "fits", "GPUs: peak");
  auto row = [&](const StrategyCost& s) {
    const bool fits = s.memory.peak() <= plan.usable_memory_bytes;
    out << format("%-16s %10.2f %9.2f %9s  %s\n", s.name.c_str(), s.step_s() * 1e3,
                  gib(static_cast<double>(s.memory.peak())), fits ? "yes" : "no",
                  memory_runs_text(s.memory, 6).c_str());
  };
  // The same candidates as the strategy table: the chosen plan, the searched one when a
  // baseline was chosen over it, and the baselines, each once.
  row(plan.chosen);
  if (!plan.layer_wise.layers.empty() && plan.layer_wise.name != plan.chosen.name) row(plan.layer_wise);
  for (const StrategyCost& b : plan.baselines) {
    if (b.name != plan.chosen.name) row(b);
  }
  const DeviceMemory& top = plan.chosen.memory.devices.empty()
                                ? DeviceMemory{}
                                : plan.chosen.memory.devices[static_cast<size_t>(plan.chosen.memory.peak_device())];
  out << format(
      "%s on GPU %d: parameters %.2f, momentum %.2f, kernel workspace %.2f, activations kept for the backward "
      "%.2f GiB",
      plan.chosen.name.c_str(), plan.chosen.memory.peak_device(), gib(static_cast<double>(top.parameters)),
      gib(static_cast<double>(top.momentum)), gib(static_cast<double>(top.workspace)),
      gib(static_cast<double>(top.activations)));
  if (plan.excluded_configurations > 0) {
    out << format("; %d configurations excluded as too large for one GPU", plan.excluded_configurations);
  }
  out << "\n";
}

}  // namespace layerplan
