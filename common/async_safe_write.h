#pragma once
// Text to a file descriptor without allocating or locking: what a signal handler, or a
// child between fork and exec, may still do (write(2) is async-signal-safe).

namespace layerplan {

// Writes all of `text` to `fd`, retrying short writes and EINTR; gives up silently on an
// error (there is nowhere left to report it).
void write_async_safe(int fd, const char* text);

}  // namespace layerplan
