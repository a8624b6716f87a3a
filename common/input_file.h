#pragma once
// The one way layerplan opens a file a user names: model, plan, cluster and admin files,
// link figures, hwloc XML, datasets, safetensors files and checkpoints. Such a file may
// be anything: a FIFO nobody writes to, /dev/zero, a directory, a sparse file of a
// terabyte. The SPANK plugin reads some of them inside slurmstepd, where a reader that
// blocks or eats memory takes the node's step daemon with it. So:
//   - the open never blocks (O_NONBLOCK; a FIFO without a writer opens at once),
//   - anything but a regular file is refused, by fstat on the open descriptor (no race
//     between a check and the open), with one line naming the path and what it is,
//   - a file read whole is read up to a cap per kind (common/limits.h), checked while
//     reading, so a file that grows or whose size lies cannot get past it.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/limits.h"

namespace layerplan {

// An open regular file (read-only, close-on-exec), closed when it goes out of scope.
// Every failure is a UsageError that starts with `label`, e.g. "plan file 'p.json'":
//   LABEL cannot be read: No such file or directory
//   LABEL is a FIFO, not a regular file
//   LABEL is larger than 64 MiB, the most this kind of file may have
class InputFile {
 public:
  // Opens `path`, refusing anything but a regular file of at most `max_bytes` bytes.
  InputFile(const std::string& path, std::string label, int64_t max_bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int fd() const { return fd_; }
  int64_t size() const { return size_; }  // as fstat saw it at open
  const std::string& label() const { return label_; }

  // The whole file, at most max_bytes (also when it grew since the open).
  std::string read_all() const;
  // Hands the descriptor over (e.g. to zlib's gzdopen); the caller closes it.
  int release();

 private:
  int fd_ = -1;
  int64_t size_ = 0;
  int64_t max_bytes_ = 0;
  std::string label_;
};

// The whole regular file at `path`, at most `max_bytes` bytes (see InputFile).
std::string read_input_file(const std::string& path, const std::string& label, int64_t max_bytes);

// Throws UsageError "LABEL: JSON nested deeper than MAX arrays and objects, the limit" when `text`
// nests deeper than `max_depth`. A scan of the text, before any parser sees it: parsers
// and serialisers of JSON trees recurse once per level, and 200000 levels overflow the
// stack. Brackets inside strings do not count; malformed text is left to the parser.
void check_json_depth(std::string_view text, const std::string& label, int max_depth = kMaxJsonDepth);
bool json_nests_deeper_than(std::string_view text, int max_depth = kMaxJsonDepth);  // the check itself

// "64 MiB", "1 GiB", "1000 bytes": a byte limit as people read it.
std::string byte_limit_text(int64_t bytes);

}  // namespace layerplan
