#pragma once
// SHA-256 of bytes and of open files: what binds a plan file to the model file it was
// made from and a task to the plan file the SPANK plugin published (docs/plan-format.md,
// "The model of a plan"). Nettle computes it; only content_hash.cc includes it.
#include <cstdint>
#include <string>
#include <string_view>

namespace layerplan {

class InputFile;

// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

// Whether `text` is 64 hex digits (either case): what sha256_hex() gives.
bool is_sha256_hex(std::string_view text);

// A file's size and SHA-256, of the bytes read.
struct FileDigest {
  int64_t size = 0;
  std::string sha256;
};

// The digest of the open file's bytes, the size it had when opened, read from its first
// byte in blocks (never held whole in memory) without moving the descriptor's offset.
// Throws UsageError naming the file when it cannot be read or has shrunk.
FileDigest file_digest(const InputFile& file);

}  // namespace layerplan
