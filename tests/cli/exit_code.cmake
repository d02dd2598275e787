# ctest: a command's exit code and a phrase of its standard error.
#   -DCMD="program|arg|..." (| separates the arguments) -DCODE=2 -DTEXT="phrase"
string(REPLACE "|" ";" command "${CMD}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 30)
if(NOT rc STREQUAL "${CODE}")
  message(FATAL_ERROR "${CMD}: exit ${rc}, expected ${CODE}\nstderr: ${err}")
endif()
string(FIND "${err}" "${TEXT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${CMD}: stderr does not say \"${TEXT}\":\n${err}")
endif()
