#pragma once
// A function of a library opened with dlopen, typed (the process-manager clients open
// libpmi2 and libpmix this way: runtime/process_manager.h).
#include <dlfcn.h>

#include <cstring>

namespace layerplan {

// The function `name` of `library` as a `Fn` (a function pointer type), or nullptr.
template <typename Fn>
Fn dl_symbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  Fn fn = nullptr;
  // POSIX guarantees a data pointer from dlsym can hold a function's address.
  static_assert(sizeof fn == sizeof address);
  std::memcpy(&fn, &address, sizeof fn);
  return fn;
}

}  // namespace layerplan
