# Writes OUT, the C++ source of common/version.h's functions: the project's VERSION and the git
# commit of SOURCE_DIR ("unknown" outside a git checkout; "+modified" when the tree differs from
# it). Run at every build (common/CMakeLists.txt); the file is rewritten only when its text
# changes, so an unchanged commit rebuilds nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD -- RESULT_VARIABLE modified ERROR_QUIET)
  if(modified)
    string(APPEND commit "+modified")
  endif()
endif()
set(text "// Written by cmake/write_version.cmake at build time.
#include \"common/version.h\"

namespace layerplan {

std::string_view layerplan_version() { return \"${VERSION}\"; }
std::string_view layerplan_commit() { return \"${commit}\"; }

}  // namespace layerplan
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
