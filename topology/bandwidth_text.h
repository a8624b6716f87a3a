#pragma once
// Bandwidths written with their unit, as flags, cluster files and the admin config take
// them: "400Gb/s", "400 Gb/s", "300GB/s", "1.6Tb/s". b is bits, B bytes; the prefixes are
// decimal (G = 10⁹). A bare number is in the unit the flag or key is named for, as it was
// before units were accepted (docs/cluster-file.md, "Bandwidths with units").
#include <string>
#include <string_view>

namespace layerplan {

enum class RateUnit { kMbits, kGbits, kTbits, kMbytes, kGbytes, kTbytes };

// "Gb/s", "GB/s", ...
const char* rate_unit_name(RateUnit unit);

// The rate in `text` in `unit`: "50GB/s" in kGbits is 400. A bare number ("400") is taken
// to be in `unit` already. Throws UsageError "NAME 'TEXT': expected a bandwidth: a positive
// number and one of Mb/s, Gb/s, Tb/s, MB/s, GB/s, TB/s (b bits, B bytes), e.g. 400Gb/s or
// 50GB/s; a bare number is UNIT" for anything else (no unit it knows, a unit in another
// case, zero, a negative or non-finite number, text after the unit).
double parse_bandwidth(std::string_view text, RateUnit unit, const std::string& name);

}  // namespace layerplan
