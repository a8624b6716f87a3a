# The Debian package for admins (docs/packaging.md): `cpack -G DEB` in the build folder
# makes layerplan_VERSION_ARCH.deb with
#   /usr/bin/layerplan
#   LAYERPLAN_SLURM_PLUGIN_DIR/spank_layerplan.so          (Slurm's PluginDir)
#   /etc/slurm/layerplan.toml                                (conffile, default_mode = "off")
#   /etc/slurm/plugstack.conf.d/layerplan.conf.example       (conffile, not included until copied
#                                                             to layerplan.conf)
#   /usr/share/doc/layerplan/, /usr/share/layerplan/examples/
# and Depends on the exact slurm-wlm-basic-plugins release whose headers it was built with.
#
# What goes where: install rules without a component are shared by `cmake --install` and the
# package; component `source-etc` (spank_plugin/) copies the examples into Slurm's folder for
# `cmake --install` only; component `deb` (below, EXCLUDE_FROM_ALL) holds the package's own
# files, installed only by cpack.
include(GNUInstallDirs)

install(FILES ${PROJECT_SOURCE_DIR}/etc/layerplan.toml DESTINATION /etc/slurm COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/layerplan.conf.example
        DESTINATION /etc/slurm/plugstack.conf.d COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/packaging.md
              ${PROJECT_SOURCE_DIR}/docs/slurm-plugin.md ${PROJECT_SOURCE_DIR}/docs/admin-config.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT deb EXCLUDE_FROM_ALL)

# The Slurm release the plugin is built against: SPANK plugins must match the loading
# srun/slurmstepd's release, and Debian's own slurm-client and slurmd pin
# slurm-wlm-basic-plugins (the package that owns PluginDir and plugstack.conf) the same way.
set(LAYERPLAN_DEB_SLURM_VERSION "" CACHE STRING
    "Debian version of slurm-wlm-basic-plugins the package depends on (empty: that of the installed libslurm-dev)")
set(slurm_version "${LAYERPLAN_DEB_SLURM_VERSION}")
if(slurm_version STREQUAL "")
  execute_process(COMMAND dpkg-query -W -f=\${Version} libslurm-dev
                  OUTPUT_VARIABLE slurm_version ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME layerplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "layerplan maintainers <layerplan@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "layer-wise parallelism planner, CPU training runtime and Slurm SPANK plugin")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "layerplan picks, per layer of a CNN, how to split it over a job's GPUs.\n"
       "This package holds the layerplan command and spank_layerplan.so, a Slurm SPANK plugin\n"
       "that plans every job step that asks for it. The plugin is not enabled on install:\n"
       "see /usr/share/doc/layerplan/packaging.md.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(slurm_version STREQUAL "")
  message(WARNING "libslurm-dev's version unknown (no dpkg-query?): the Debian package will not depend on Slurm")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "slurm-wlm-basic-plugins (= ${slurm_version})")
endif()
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
