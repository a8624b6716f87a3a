#pragma once
// Text the plugin hands to Slurm's log, the job's output or the task environment often
// holds something a user chose (a model file's name, a path, an error about either). A
// newline there forges log lines; an escape sequence rewrites the terminal of whoever
// reads the output. So every such string goes through printable() first.
#include <string>
#include <string_view>

namespace layerplan::spank {

// `text` with every control character escaped: bytes below 0x20, 0x7f (as \n, \r, \t or
// \xNN) and the C1 controls U+0080..U+009F of UTF-8 (as \u0080..\u009f; U+009B starts an
// escape sequence on some terminals). A backslash stays as it is; other bytes, valid
// UTF-8 or not, are kept.
std::string printable(std::string_view text);

// True when `text` holds a character printable() would escape.
bool has_control_characters(std::string_view text);

}  // namespace layerplan::spank
