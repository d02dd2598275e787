# ctest packaging.systemd (after packaging.install): the installed unit names the installed
# loopguardd and `systemd-analyze verify` (offline, on the file) accepts it without a warning:
# an unknown key or a bad value is only a warning to systemd, so any output fails the test.
#   -DPREFIX=<installed prefix> -DSYSTEMD_ANALYZE=<systemd-analyze>
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
set(unit "${PREFIX}/lib/systemd/system/loopguardd.service")
file(STRINGS "${unit}" exec REGEX "^ExecStart=")
if(NOT exec MATCHES "^ExecStart=${PREFIX}/bin/loopguardd --listen 127\\.0\\.0\\.1:7070 --db /var/lib/loopguard/loopguard\\.db$")
  message(FATAL_ERROR "${unit}: ExecStart does not run ${PREFIX}/bin/loopguardd: ${exec}")
endif()
foreach(line "Restart=on-failure" "StateDirectory=loopguard" "KillSignal=SIGTERM"
             "NoNewPrivileges=yes" "ProtectSystem=strict")
  file(STRINGS "${unit}" has REGEX "^${line}$")
  if(NOT has)
    message(FATAL_ERROR "${unit}: no line ${line}")
  endif()
endforeach()
execute_process(COMMAND ${SYSTEMD_ANALYZE} verify "${unit}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "systemd-analyze verify ${unit}: exit ${rc}\n${out}${err}")
endif()
