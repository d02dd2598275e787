# The packaging tests (label packaging; docs/packaging.md, "Tests"), scratch files under
# <build>/packaging-test/. Not in sanitizer builds: their consumers would link the installed,
# instrumented libraries without the sanitizer runtime, and what they check does not change.
if(LOOPGUARD_ENABLE_ASAN OR LOOPGUARD_ENABLE_UBSAN)
  message(STATUS "Sanitizer build: the packaging tests are not registered")
  return()
endif()

set(scratch ${CMAKE_CURRENT_BINARY_DIR}/packaging-test)
set(script_dir ${CMAKE_CURRENT_SOURCE_DIR}/tests/packaging)
add_test(NAME packaging.install
  COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_CURRENT_BINARY_DIR} -DPREFIX=${scratch}/prefix
          -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR} -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
          -DABI=${LOOPGUARD_ABI_VERSION} -DOBJDUMP=${CMAKE_OBJDUMP}
          -P ${script_dir}/install.cmake)
set_tests_properties(packaging.install PROPERTIES FIXTURES_SETUP loopguard_installed)

add_test(NAME packaging.consumer
  COMMAND ${CMAKE_COMMAND} -DPREFIX=${scratch}/prefix -DWORK=${scratch}/consumer
          -DLIBDIR=${CMAKE_INSTALL_LIBDIR} -DCONSUMER=${script_dir}/consumer
          -DGENERATOR=${CMAKE_GENERATOR} -DCXX=${CMAKE_CXX_COMPILER} -DCC=${CMAKE_C_COMPILER}
          -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -P ${script_dir}/consumer.cmake)

find_program(LOOPGUARD_SYSTEMD_ANALYZE systemd-analyze)
if(LOOPGUARD_SYSTEMD_ANALYZE)
  add_test(NAME packaging.systemd
    COMMAND ${CMAKE_COMMAND} -DPREFIX=${scratch}/prefix
            -DSYSTEMD_ANALYZE=${LOOPGUARD_SYSTEMD_ANALYZE} -P ${script_dir}/systemd.cmake)
  set_tests_properties(packaging.systemd PROPERTIES FIXTURES_REQUIRED loopguard_installed)
else()
  message(WARNING "systemd-analyze not found (Debian: systemd): packaging.systemd not registered")
endif()
set_tests_properties(packaging.consumer PROPERTIES FIXTURES_REQUIRED loopguard_installed)

find_program(LOOPGUARD_DPKG_DEB dpkg-deb)
if(LOOPGUARD_DPKG_DEB AND PROJECT_IS_TOP_LEVEL)
  add_test(NAME packaging.deb
    COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_CURRENT_BINARY_DIR} -DWORK=${scratch}/deb
            -DLIBDIR=${CMAKE_INSTALL_LIBDIR} -DABI=${LOOPGUARD_ABI_VERSION}
            -DVERSION=${PROJECT_VERSION} -DCPACK=${CMAKE_CPACK_COMMAND}
            -DJEMALLOC=${LOOPGUARD_DAEMON_JEMALLOC} -P ${script_dir}/deb.cmake)
else()
  message(WARNING "dpkg-deb not found (Debian: dpkg-dev): packaging.deb not registered")
endif()
get_property(packaging_tests DIRECTORY PROPERTY TESTS)
list(FILTER packaging_tests INCLUDE REGEX "^packaging\\.")
set_tests_properties(${packaging_tests} PROPERTIES LABELS packaging TIMEOUT 180)
