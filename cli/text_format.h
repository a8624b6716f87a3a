#pragma once
// printf-style formatting into a std::string, with the compiler checking the arguments
// against the format (a mismatched table column is a build error, not garbage output).
#include <string>

namespace layerplan {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace layerplan
