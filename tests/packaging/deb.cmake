# ctest packaging.deb: `cpack -G DEB` of the build tree into a scratch directory; `dpkg-deb -c`
# lists every file of the install under /usr (the unit in /usr/lib/systemd/system, starting
# /usr/bin/loopguardd), the control file names the package and its shared-library dependencies;
# `dpkg-deb -x` into a scratch root (no system-wide install) and the extracted programs run.
#   -DBUILD=<build dir> -DWORK=<scratch dir> -DLIBDIR=lib -DABI=<N> -DVERSION=<x.y.z>
#   -DCPACK=<cpack> -DJEMALLOC=<ON: loopguardd links jemalloc, so Depends names it>
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
run(COMMAND ${CPACK} -G DEB --config "${BUILD}/CPackConfig.cmake" -B "${WORK}" DIR "${BUILD}"
    TIMEOUT 120)
file(GLOB debs "${WORK}/*.deb")
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "cpack made ${count} .deb files in ${WORK}: ${debs}")
endif()
message(STATUS "built ${debs}")

run(COMMAND dpkg-deb -c "${debs}" OUT listing)
expected_install_paths(paths "${LIBDIR}")
foreach(path IN LISTS paths)
  string(REGEX REPLACE "([.+])" "\\\\\\1" pattern "${path}")
  if(NOT listing MATCHES " \\./usr/${pattern}( -> [^\n]*)?\n")
    message(FATAL_ERROR "dpkg-deb -c: no ./usr/${path}:\n${listing}")
  endif()
endforeach()

run(COMMAND dpkg-deb -f "${debs}" OUT control)
set(fields "Package: loopguard" "Version: ${VERSION}" "Maintainer: " "Depends: [^\n]*libc6"
           "Depends: [^\n]*libstdc\\+\\+6")
if(JEMALLOC)
  list(APPEND fields "Depends: [^\n]*libjemalloc2")
endif()
foreach(field IN LISTS fields)
  if(NOT control MATCHES "(^|\n)${field}")
    message(FATAL_ERROR "dpkg-deb -f: no '${field}':\n${control}")
  endif()
endforeach()

set(root "${WORK}/root")
run(COMMAND dpkg-deb -x "${debs}" "${root}")
file(STRINGS "${root}/usr/lib/systemd/system/loopguardd.service" exec REGEX "^ExecStart=")
if(NOT exec MATCHES "^ExecStart=/usr/bin/loopguardd ")
  message(FATAL_ERROR "the .deb's unit does not run /usr/bin/loopguardd: ${exec}")
endif()
foreach(program loopguardd loopguard)
  run(COMMAND "${root}/usr/bin/${program}" --version OUT said TIMEOUT 30)
  if(NOT said MATCHES "^${program} ${VERSION}")
    message(FATAL_ERROR "${root}/usr/bin/${program} --version said: ${said}")
  endif()
endforeach()
