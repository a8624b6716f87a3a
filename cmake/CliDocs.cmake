# The command's man page and bash completion (docs/packaging.md), installed by
# `cmake --install` and the Debian package alike:
#   share/man/man1/layerplan.1.gz                  made at build time from the built command's
#                                                  --help (scripts/man-page), gzip -9n
#   share/bash-completion/completions/layerplan    cli/completion.bash
find_package(Python3 REQUIRED COMPONENTS Interpreter)
include(GNUInstallDirs)

set(man_page ${PROJECT_BINARY_DIR}/layerplan.1)
add_custom_command(
  OUTPUT ${man_page} ${man_page}.gz
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/man-page $<TARGET_FILE:layerplan> ${man_page}
  COMMAND gzip -9n -f -k ${man_page}
  DEPENDS layerplan ${PROJECT_SOURCE_DIR}/scripts/man-page
  COMMENT "Writing layerplan.1 from layerplan --help")
add_custom_target(layerplan_man_page ALL DEPENDS ${man_page}.gz)
install(FILES ${man_page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/cli/completion.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME layerplan)
