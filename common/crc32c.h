#pragma once
// CRC-32C (Castagnoli, the polynomial 0x1EDC6F41 reflected: 0x82F63B78), as iSCSI
// (RFC 3720, appendix B.4) and TensorFlow's record files use it. Debian 12 ships no
// library for it that the build already has (zlib's crc32 is another polynomial; Abseil
// 20220623 has no absl/crc), and a table of 256 words is all it takes.
#include <cstdint>
#include <string_view>

namespace layerplan {

// The CRC-32C of `bytes`: crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view bytes);

}  // namespace layerplan
