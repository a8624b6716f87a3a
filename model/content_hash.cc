#include "model/content_hash.h"

#include <nettle/sha2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"

namespace layerplan {

namespace {

constexpr int64_t kBlockBytes = int64_t{1} << 20;

constexpr size_t kHexDigits = size_t{2} * SHA256_DIGEST_SIZE;

std::string hex_digest(sha256_ctx& ctx) {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(kHexDigits);
  for (const uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  return hex_digest(ctx);
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != kHexDigits) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

FileDigest file_digest(const InputFile& file) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  std::vector<uint8_t> block(static_cast<size_t>(kBlockBytes));
  FileDigest out;
  // The bytes the file had when it was opened, which is what its reader takes it to hold.
  while (out.size < file.size()) {
    const auto want = static_cast<size_t>(std::min<int64_t>(file.size() - out.size, kBlockBytes));
    // pread: the descriptor's offset stays where the model's reader expects it.
    const ssize_t n = ::pread(file.fd(), block.data(), want, out.size);
    if (n < 0 && errno == EINTR) continue;
    require(n >= 0, file.label() + " cannot be read: " + std::strerror(errno));
    require(n > 0, file.label() + " changed while it was read: it ends before byte " + std::to_string(file.size()));
    sha256_update(&ctx, static_cast<size_t>(n), block.data());
    out.size += n;
  }
  out.sha256 = hex_digest(ctx);
  return out;
}

}  // namespace layerplan
