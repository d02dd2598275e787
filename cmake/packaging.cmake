# Packaging (docs/packaging.md): what `cmake --install` puts where, the CMake package
# (find_package(loopguard): loopguard::worker, loopguard::client, loopguard::c), the pkg-config
# files (loopguard.pc: the C library; loopguard-worker.pc: the C++ SDK), the systemd unit, the
# .deb (CPack) and the tests that check them (label packaging). Included at the end of
# CMakeLists.txt.
#
# LOOPGUARD_INSTALL: off when Loopguard is a subdirectory of another project (worker-sdk/examples
# adds it that way), which then keeps only the C library's install rule from CMakeLists.txt.
option(LOOPGUARD_INSTALL "Install the programs, the SDK and the CMake package"
       ${PROJECT_IS_TOP_LEVEL})
if(NOT LOOPGUARD_INSTALL)
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ---------------------------------------------------------------------------------------------
# Programs, headers, libraries.
install(TARGETS loopguardd loopguard RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers of the C++ SDK and the shared headers they include (loopguard.h: the
# install rule beside loopguard_c in CMakeLists.txt).
install(DIRECTORY worker-sdk/include/loopguard shared/include/loopguard
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")

# The C++ SDK as static libraries, exported as loopguard::shared, ::tls, ::worker, ::client; the C
# library (installed in CMakeLists.txt) as loopguard::c. loopguard::options (our warnings) is
# exported only because the static libraries name it for linking (LINK_ONLY: a consumer gets
# its sanitizer link flags, none of its compile options).
set_target_properties(loopguard_shared PROPERTIES EXPORT_NAME shared)
set_target_properties(loopguard_worker PROPERTIES EXPORT_NAME worker)
set_target_properties(loopguard_client PROPERTIES EXPORT_NAME client)
set_target_properties(loopguard_tls PROPERTIES EXPORT_NAME tls)
set_target_properties(loopguard_c PROPERTIES EXPORT_NAME c)
set_target_properties(loopguard_options PROPERTIES EXPORT_NAME options)
install(TARGETS loopguard_shared loopguard_tls loopguard_worker loopguard_client loopguard_options
        EXPORT loopguardTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# ---------------------------------------------------------------------------------------------
# The CMake package: <libdir>/cmake/loopguard/loopguard{Config,ConfigVersion,Targets}.cmake.
set(LOOPGUARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/loopguard)
install(EXPORT loopguardTargets NAMESPACE loopguard:: DESTINATION ${LOOPGUARD_CMAKE_DIR})
configure_package_config_file(cmake/loopguardConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/loopguardConfig.cmake INSTALL_DESTINATION ${LOOPGUARD_CMAKE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/loopguardConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/loopguardConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/loopguardConfigVersion.cmake
        DESTINATION ${LOOPGUARD_CMAKE_DIR})

# ---------------------------------------------------------------------------------------------
# pkg-config files, relocatable: prefix is found from the file's own place (${pcfiledir}), so
# `cmake --install --prefix P` and the .deb (prefix /usr) need no other file.
set(LOOPGUARD_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH LOOPGUARD_PC_TO_PREFIX /prefix/${LOOPGUARD_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" LOOPGUARD_PC_TO_PREFIX "${LOOPGUARD_PC_TO_PREFIX}")
foreach(pc loopguard loopguard-worker)
  configure_file(packaging/${pc}.pc.in ${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${LOOPGUARD_PKGCONFIG_DIR})
endforeach()

# ---------------------------------------------------------------------------------------------
# The systemd unit, into <prefix>/lib/systemd/system (/usr/lib/systemd/system in the .deb), with
# ExecStart naming <prefix>/bin/loopguardd for the prefix of this install (--prefix included).
install(CODE "
  set(LOOPGUARD_UNIT_SOURCE \"${CMAKE_CURRENT_SOURCE_DIR}/packaging/loopguardd.service\")
  set(LOOPGUARD_UNIT_WORK \"${CMAKE_CURRENT_BINARY_DIR}/install-unit\")
  set(LOOPGUARD_UNIT_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  include(\"${CMAKE_CURRENT_SOURCE_DIR}/cmake/install_unit.cmake\")")

if(PROJECT_IS_TOP_LEVEL)  # CPack's configuration belongs to the top-level project
  include(cmake/deb.cmake)
endif()

if(LOOPGUARD_BUILD_TESTS)
  include(cmake/packaging_tests.cmake)
endif()
