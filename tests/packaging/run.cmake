# Helpers for the packaging tests (included by the scripts beside it).

# Runs a command (bounded in time); on failure stops the test with the command, its exit code
# and its output. The standard output is left in the variable named by OUT when given.
function(run)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT;TIMEOUT;DIR" "COMMAND")
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 60)
  endif()
  if(NOT arg_DIR)
    set(arg_DIR .)
  endif()
  execute_process(COMMAND ${arg_COMMAND} WORKING_DIRECTORY ${arg_DIR} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${arg_TIMEOUT})
  if(NOT rc EQUAL 0)
    list(JOIN arg_COMMAND " " shown)
    message(FATAL_ERROR "${shown}: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(arg_OUT)
    set(${arg_OUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# Stops the test unless every path of PATHS (relative) exists under ROOT.
function(expect_paths root)
  foreach(path IN LISTS ARGN)
    if(NOT EXISTS "${root}/${path}" AND NOT IS_SYMLINK "${root}/${path}")
      message(FATAL_ERROR "${root}: ${path} is missing")
    endif()
  endforeach()
endfunction()

# What an install holds, relative to its prefix (LIBDIR: lib or lib/<multiarch>).
macro(expected_install_paths var libdir)
  set(${var}
    bin/loopguardd bin/loopguard
    include/loopguard/loopguard.h include/loopguard/execution_economics_manager.hpp
    include/loopguard/swarm_worker.hpp include/loopguard/daemon_client.hpp
    include/loopguard/config.hpp include/loopguard/verdict.hpp
    include/loopguard/fingerprint.hpp include/loopguard/protocol.hpp
    include/loopguard/status.hpp include/loopguard/detail/tokens.hpp
    ${libdir}/libloopguard.so ${libdir}/libloopguard.so.${ABI}
    ${libdir}/libloopguard_worker.a ${libdir}/libloopguard_client.a
    ${libdir}/libloopguard_shared.a
    ${libdir}/cmake/loopguard/loopguardConfig.cmake
    ${libdir}/cmake/loopguard/loopguardConfigVersion.cmake
    ${libdir}/cmake/loopguard/loopguardTargets.cmake
    ${libdir}/pkgconfig/loopguard.pc ${libdir}/pkgconfig/loopguard-worker.pc
    lib/systemd/system/loopguardd.service)
endmacro()
