#pragma once
// The one way layerplan writes a file (plans, reports, traces, profiles, logs, checkpoints,
// the Slurm plugin's files), safe in a folder other users may write to:
//  - the folder is opened once and every name is looked up in it (openat, renameat), so
//    swapping the folder's path meanwhile moves nothing elsewhere;
//  - the text goes to a new file with a random name, ".NAME.<16 hex digits>.tmp", created
//    O_CREAT|O_EXCL|O_NOFOLLOW with the final mode (less the umask): a file or symbolic link
//    someone planted at any name is never opened, so nothing outside is written;
//  - it is written whole and fsynced, then renamed onto NAME (or linked, never replacing
//    anything), and the folder is fsynced: a reader sees the old file or the new one whole;
//  - a symbolic link at NAME is refused, not followed and not replaced: it is either a trap
//    planted by someone else or a link of the user's own that replacing would silently cut;
//  - on any failure the temporary file is removed and the old file, if any, is untouched.
// Every error is a UsageError "WHAT 'PATH': WHY", WHAT naming the flag or the file's role.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace layerplan {

// A file being written under a temporary name, until publish() puts it in place.
class NewFile {
 public:
  // The file PATH, in PATH's folder (opened here; "." when PATH names no folder).
  NewFile(const std::string& path, const std::string& what, mode_t mode = 0666);
  // The file NAME in a folder the caller holds open (`dir_fd`, kept open while this lives);
  // `dir` is the folder's path for messages ("" names NAME alone).
  NewFile(int dir_fd, const std::string& dir, const std::string& name, const std::string& what, mode_t mode);
  // Closes; removes the temporary file unless it was published.
  ~NewFile();
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;

  void write(std::string_view bytes);
  void write(const void* data, size_t size);

  // fsyncs, renames the file onto NAME (replacing a file there, refusing a symbolic link),
  // fsyncs the folder. The descriptor stays open: what is written afterwards goes to the
  // file at its final name, as the training log's lines do.
  void publish();
  // fsyncs and links the file as NAME, never replacing anything: false, with nothing
  // changed and the file still unpublished, when NAME exists.
  bool publish_if_absent();

  // The final path, as messages name it.
  const std::string& path() const { return path_; }

 private:
  void create(mode_t mode);
  void refuse_symlink() const;
  [[noreturn]] void fail(const std::string& why) const;

  int own_dir_fd_ = -1;  // the folder, when this object opened it
  int dir_fd_ = -1;
  std::string path_, name_, temp_, what_;
  int fd_ = -1;
  bool published_ = false;
};

// Throws the UsageError NewFile would for a symbolic link or a folder at `path`, creating
// nothing: a long run (training) checks its outputs so before it starts.
void check_output_path(const std::string& path, const std::string& what);

// Writes `text` to `path` through a NewFile: the whole file or, on failure, nothing.
void write_file_safely(const std::string& path, std::string_view text, const std::string& what, mode_t mode = 0666);

// A random 64-bit value as 16 hex digits, from getrandom(2), for names other users cannot
// guess. Throws std::runtime_error when the kernel has none to give.
std::string random_hex();

}  // namespace layerplan
