# ctest packaging.consumer (after packaging.install): applications built against the installed
# tree only, then run.
#  - tests/packaging/consumer/ copied out of the source tree, configured with find_package
#    (CMAKE_PREFIX_PATH = the prefix, no package registry), built and run: loopguard::worker
#    stops a repeated call; loopguard::client links.
#  - consumer.c compiled with `pkg-config --cflags --libs loopguard` and run with
#    LD_LIBRARY_PATH = the prefix's libdir.
#  - consumer/main.cpp compiled with `pkg-config --cflags --libs loopguard-worker` and run.
#   -DPREFIX=<installed prefix> -DWORK=<scratch dir> -DLIBDIR=lib -DCONSUMER=<consumer source>
#   -DGENERATOR=... -DCXX=... -DCC=... [-DLAUNCHER=ccache]
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
file(REMOVE_RECURSE "${WORK}")
file(COPY "${CONSUMER}/" DESTINATION "${WORK}/src")

set(launcher "")
if(LAUNCHER)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run(COMMAND ${CMAKE_COMMAND} -S "${WORK}/src" -B "${WORK}/build" -G "${GENERATOR}"
            -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CXX}" ${launcher}
            "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
            -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
file(STRINGS "${WORK}/build/CMakeCache.txt" found REGEX "^loopguard_DIR:")
if(NOT found STREQUAL "loopguard_DIR:PATH=${PREFIX}/${LIBDIR}/cmake/loopguard")
  message(FATAL_ERROR "find_package(loopguard) found ${found}, not the one in ${PREFIX}")
endif()
run(COMMAND ${CMAKE_COMMAND} --build "${WORK}/build" -j2 TIMEOUT 120)
run(COMMAND "${WORK}/build/guard" OUT said)
message(STATUS "guard (find_package): ${said}")
run(COMMAND "${WORK}/build/client_options" OUT said)
message(STATUS "client_options (find_package): ${said}")

# pkg-config sees only the prefix's files (and the system's, for nlohmann_json and libxxhash).
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
run(COMMAND pkg-config --cflags --libs loopguard OUT c_flags)
string(STRIP "${c_flags}" c_flags)
separate_arguments(c_flags UNIX_COMMAND "${c_flags}")
run(COMMAND ${CC} -std=c99 -Wall -Wextra -Werror -o "${WORK}/c_consumer" "${WORK}/src/consumer.c"
            ${c_flags})
run(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${PREFIX}/${LIBDIR}" "${WORK}/c_consumer"
    OUT said)
message(STATUS "c_consumer (pkg-config loopguard): ${said}")

run(COMMAND pkg-config --cflags --libs loopguard-worker OUT cxx_flags)
string(STRIP "${cxx_flags}" cxx_flags)
separate_arguments(cxx_flags UNIX_COMMAND "${cxx_flags}")
run(COMMAND ${LAUNCHER} ${CXX} -std=c++20 -O1 -o "${WORK}/guard_pc" "${WORK}/src/main.cpp"
            ${cxx_flags} TIMEOUT 120)
run(COMMAND "${WORK}/guard_pc" OUT said)
message(STATUS "guard (pkg-config loopguard-worker): ${said}")
