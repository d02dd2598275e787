# ctest packaging.install: `cmake --install` of the build tree into a scratch prefix; every file
# docs/packaging.md lists is there, libloopguard.so.N carries its SONAME, and nothing installed
# for the CMake package or pkg-config names the source or the build tree.
#   -DBUILD=<build dir> -DPREFIX=<scratch prefix> -DSOURCE=<source dir> -DLIBDIR=lib
#   -DABI=<N> -DOBJDUMP=<objdump>
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
file(REMOVE_RECURSE "${PREFIX}")
run(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${PREFIX}")
expected_install_paths(paths "${LIBDIR}")
expect_paths("${PREFIX}" ${paths})

run(COMMAND ${OBJDUMP} -p "${PREFIX}/${LIBDIR}/libloopguard.so.${ABI}" OUT dynamic)
if(NOT dynamic MATCHES "SONAME +libloopguard\\.so\\.${ABI}\n")
  message(FATAL_ERROR "libloopguard.so.${ABI}: no SONAME libloopguard.so.${ABI}:\n${dynamic}")
endif()

file(GLOB_RECURSE package_files "${PREFIX}/${LIBDIR}/cmake/*" "${PREFIX}/${LIBDIR}/pkgconfig/*")
foreach(f IN LISTS package_files)
  file(READ "${f}" text)
  foreach(tree "${SOURCE}" "${BUILD}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}: an installed package must not")
    endif()
  endforeach()
endforeach()
message(STATUS "installed into ${PREFIX}")
