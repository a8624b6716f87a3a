#include "topology/nic_rates.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace layerplan {

namespace {

namespace fs = std::filesystem;

// sysfs attributes are a page at most.
constexpr int64_t kMaxSysfsBytes = 4096;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// The file's text, or nullopt with `why` set (missing, not a regular file, unreadable).
std::optional<std::string> read_sysfs(const fs::path& path, std::string& why) {
  try {
    return read_input_file(path.string(), path.string(), kMaxSysfsBytes);
  } catch (const UsageError& e) {
    why = e.what();
    return std::nullopt;
  }
}

// A name hwloc gave that is safe to put into a path.
bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// The port numbers below `ports`, in order; empty when the folder cannot be listed.
std::vector<int> port_numbers(const fs::path& ports) {
  std::vector<int> numbers;
  std::error_code error;
  for (fs::directory_iterator it(ports, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    int n = 0;
    const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec == std::errc() && ptr == name.data() + name.size() && n >= 0) numbers.push_back(n);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

void add_infiniband_rate(NicInfo& nic, const fs::path& sysfs, std::vector<std::string>& notes) {
  const fs::path ports = sysfs / "class" / "infiniband" / nic.name / "ports";
  const std::vector<int> numbers = port_numbers(ports);
  if (numbers.empty()) {
    if (nic.active) notes.push_back(nic.name + ": no ports under " + ports.string() + ": no rate from sysfs");
    return;
  }
  for (const int n : numbers) {
    const fs::path port = ports / std::to_string(n);
    std::string why;
    if (const auto state = read_sysfs(port / "state", why); state && state->find("ACTIVE") == std::string::npos) {
      continue;  // "1: DOWN": not the port in use
    }
    const std::optional<std::string> text = read_sysfs(port / "rate", why);
    const std::optional<double> rate = text ? parse_ib_rate(*text) : std::nullopt;
    if (!rate) {
      notes.push_back(nic.name + " port " + std::to_string(n) + ": " +
                      (text ? (port / "rate").string() + " says '" + clipped(trimmed(*text)) +
                                  "', expected e.g. '400 Gb/sec (4X NDR)'"
                            : why) +
                      ": no rate from sysfs");
      continue;
    }
    if (*rate > nic.rate_gbits) {
      nic.rate_gbits = *rate;
      nic.rate_from = "sysfs: " + nic.name + " port " + std::to_string(n);
    }
  }
}

// `noted`: whether what goes wrong is worth a note (the Ethernet rate is used only when
// no InfiniBand/RoCE/EFA port is active).
void add_ethernet_rate(NicInfo& nic, const fs::path& sysfs, bool noted, std::vector<std::string>& notes) {
  const fs::path speed = sysfs / "class" / "net" / nic.name / "speed";
  std::error_code error;
  if (!fs::exists(speed, error)) return;  // not a network interface sysfs knows
  std::string why;
  const std::optional<std::string> text = read_sysfs(speed, why);
  if (!text) {  // a link that is down makes `speed` fail with EINVAL
    if (noted) notes.push_back(nic.name + ": " + why + ": no rate from sysfs");
    return;
  }
  bool garbage = false;
  const std::optional<double> gbits = parse_net_speed(*text, garbage);
  if (garbage && noted) {
    notes.push_back(nic.name + ": " + speed.string() + " says '" + clipped(trimmed(*text)) +
                    "', expected Mb/s, e.g. '25000': no rate from sysfs");
  }
  if (gbits) {
    nic.rate_gbits = *gbits;
    nic.rate_from = "sysfs: " + nic.name + " speed";
  }
}

}  // namespace

std::optional<double> parse_ib_rate(std::string_view text) {
  const std::string_view body = trimmed(text);
  const size_t number_end = body.find_first_not_of("0123456789.");
  if (number_end == 0 || number_end == std::string_view::npos) return std::nullopt;
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(body.data(), body.data() + number_end, value);
  if (ec != std::errc() || ptr != body.data() + number_end || !std::isfinite(value) || value <= 0) return std::nullopt;
  const std::string_view rest = body.substr(number_end);
  if (rest != " Gb/sec" && rest.rfind(" Gb/sec (", 0) != 0) return std::nullopt;
  return value;
}

std::optional<double> parse_net_speed(std::string_view text, bool& garbage) {
  const std::string_view body = trimmed(text);
  long long mbits = 0;
  const auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), mbits);
  garbage = body.empty() || ec != std::errc() || ptr != body.data() + body.size() || mbits < -1;
  if (garbage || mbits <= 0) return std::nullopt;
  return static_cast<double>(mbits) / 1000.0;
}

void add_sysfs_nic_rates(NodeTopology& node, const std::string& sysfs_root) {
  const fs::path sysfs(sysfs_root);
  const bool fabric_active = std::any_of(node.nics.begin(), node.nics.end(),
                                         [](const NicInfo& nic) { return nic.kind == "OpenFabrics" && nic.active; });
  for (NicInfo& nic : node.nics) {
    if (!plain_name(nic.name)) continue;
    if (nic.kind == "OpenFabrics") add_infiniband_rate(nic, sysfs, node.notes);
    if (nic.kind == "network") add_ethernet_rate(nic, sysfs, !fabric_active, node.notes);
  }
}

}  // namespace layerplan
