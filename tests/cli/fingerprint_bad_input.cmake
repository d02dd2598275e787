cmake_minimum_required(VERSION 3.25)
# ctest: a trace with a broken line is refused with exit status 2 and a message naming the file
# and the line; nothing is printed to stdout for it.
#   -DLOOPGUARD=path/to/loopguard -DBAD=tests/data/bad/not_json_line3.jsonl
execute_process(COMMAND "${LOOPGUARD}" fingerprint "${BAD}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}")
endif()
if(NOT err MATCHES "not_json_line3.jsonl:3: not valid JSON")
  message(FATAL_ERROR "error does not name file and line: ${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "partial output was printed: ${out}")
endif()
