# The Debian package for admins (docs/packaging.md): `cpack -G DEB` in the build folder
# makes layerplan_VERSION_ARCH.deb with
#   /usr/bin/layerplan
#   LAYERPLAN_SLURM_PLUGIN_DIR/spank_layerplan.so          (Slurm's PluginDir)
#   /etc/slurm/layerplan.toml                                (conffile, default_mode = "off")
#   /etc/slurm/plugstack.conf.d/layerplan.conf.example       (conffile, not included until copied
#                                                             to layerplan.conf)
#   /usr/share/doc/layerplan/ (with copyright and changelog.gz), /usr/share/layerplan/examples/
#   /usr/share/man/man1/layerplan.1.gz, /usr/share/bash-completion/completions/layerplan
#                                                            (cmake/CliDocs.cmake)
# and Depends on the Slurm release (major.minor) whose headers it was built with.
#
# What goes where: install rules without a component are shared by `cmake --install` and the
# package; component `source-etc` (spank_plugin/) copies the examples into Slurm's folder for
# `cmake --install` only; component `deb` (below, EXCLUDE_FROM_ALL) holds the package's own
# files, installed only by cpack.
include(GNUInstallDirs)
# `cmake --install` and cpack install what is built, without building the whole tree first
# (the tests, the benchmarks): tests/package/deb_install.sh builds the package's targets.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(FILES ${PROJECT_SOURCE_DIR}/etc/layerplan.toml DESTINATION /etc/slurm COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/layerplan.conf.example
        DESTINATION /etc/slurm/plugstack.conf.d COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/packaging.md
              ${PROJECT_SOURCE_DIR}/docs/slurm-plugin.md ${PROJECT_SOURCE_DIR}/docs/admin-config.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT deb EXCLUDE_FROM_ALL)

# The Slurm release the plugin is built against (its major.minor, from the slurm_version.h
# it is compiled with): SPANK plugins must match the loading srun/slurmstepd's release,
# and slurm-wlm-basic-plugins (on every Slurm node; it owns PluginDir and plugstack.conf)
# carries the release. Any Debian revision of that release will do (a security upload
# keeps it), hence a range; the plugin also checks the running release itself.
file(STRINGS ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h slurm_version_line
     REGEX "^#define SLURM_VERSION_NUMBER +0x[0-9a-fA-F]+")
if(NOT slurm_version_line MATCHES "(0x[0-9a-fA-F]+)")
  message(FATAL_ERROR "no SLURM_VERSION_NUMBER in ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
endif()
math(EXPR slurm_major "(${CMAKE_MATCH_1} >> 16) & 0xff")
math(EXPR slurm_minor "(${CMAKE_MATCH_1} >> 8) & 0xff")
math(EXPR slurm_next_minor "${slurm_minor} + 1")
foreach(v slurm_minor slurm_next_minor)
  string(LENGTH "${${v}}" length)
  if(length EQUAL 1)
    set(${v} "0${${v}}")
  endif()
endforeach()

# Who the package names as its maintainer (Maintainer field, changelog, copyright).
set(LAYERPLAN_DEB_MAINTAINER "layerplan maintainers <maintainers@users.noreply.a-seed-fab81089.example>"
    CACHE STRING "Maintainer of the Debian package: \"Name <address>\" (docs/packaging.md)")
if(NOT LAYERPLAN_DEB_MAINTAINER MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+[.][^<>@ ]+>$"
   OR LAYERPLAN_DEB_MAINTAINER MATCHES "@(localhost|localdomain)")
  message(FATAL_ERROR "LAYERPLAN_DEB_MAINTAINER '${LAYERPLAN_DEB_MAINTAINER}': expected \"Name <user@domain>\" "
                      "with a mail domain (not localhost)")
endif()

# /usr/share/doc/layerplan/copyright (machine-readable) and changelog.gz, compressed as
# Debian wants (gzip -9n: no name or time inside, so the same input gives the same file).
# The changelog's newest entry must be this version.
set(deb_dir ${PROJECT_BINARY_DIR}/debian)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/copyright.in ${deb_dir}/copyright @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${deb_dir}/changelog @ONLY)
file(STRINGS ${deb_dir}/changelog changelog_top LIMIT_COUNT 1)
if(NOT changelog_top MATCHES "^layerplan \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog.in starts with '${changelog_top}': "
                      "add an entry for version ${PROJECT_VERSION} at its top")
endif()
execute_process(COMMAND gzip -9n -c ${deb_dir}/changelog OUTPUT_FILE ${deb_dir}/changelog.gz
                RESULT_VARIABLE gzip_rc)
if(NOT gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${deb_dir}/changelog failed: ${gzip_rc}")
endif()
install(FILES ${deb_dir}/copyright ${deb_dir}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ COMPONENT deb EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME layerplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${LAYERPLAN_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "layer-wise parallelism planner for CNN training on Slurm clusters")
# Lines of at most 80 characters (lintian: extended-description-line-too-long).
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "layerplan picks, per layer of a CNN, how to split it over a job's GPUs.\n"
       "This package holds the layerplan command and spank_layerplan.so, a Slurm\n"
       "SPANK plugin that plans every job step that asks for it. The plugin is not\n"
       "enabled on install: see /usr/share/doc/layerplan/packaging.md.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
string(CONCAT CPACK_DEBIAN_PACKAGE_DEPENDS "slurm-wlm-basic-plugins (>= ${slurm_major}.${slurm_minor}), "
       "slurm-wlm-basic-plugins (<< ${slurm_major}.${slurm_next_minor}~)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# CPack marks no file as a conffile by itself (debhelper would mark all of /etc).
file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles
     "/etc/slurm/layerplan.toml\n/etc/slurm/plugstack.conf.d/layerplan.conf.example\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/conffiles)
set(CPACK_STRIP_FILES ON)
# One package from the shared rules and component `deb`, without `source-etc`.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified deb)
set(CPACK_DEBIAN_PACKAGE_NAME layerplan)
include(CPack)
