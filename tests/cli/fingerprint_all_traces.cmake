cmake_minimum_required(VERSION 3.25)
# ctest: `loopguard fingerprint` over every bundled trace matches the golden output in
# tests/data/fingerprints/ (fingerprints are a wire contract: they must not drift), and prints one
# line per tool_call / tool_result.
#   -DLOOPGUARD=path/to/loopguard -DTRACES=tests/data/traces
get_filename_component(data_dir "${TRACES}" DIRECTORY)
file(GLOB traces "${TRACES}/*.jsonl")
list(LENGTH traces n)
if(n LESS 10)
  message(FATAL_ERROR "expected the bundled traces in ${TRACES}, found ${n}")
endif()
foreach(trace IN LISTS traces)
  get_filename_component(name "${trace}" NAME)
  execute_process(COMMAND "${LOOPGUARD}" fingerprint "${name}"
                  WORKING_DIRECTORY "${TRACES}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fingerprint ${name} exited ${rc}: ${err}")
  endif()
  file(STRINGS "${trace}" lines REGEX "\"kind\": *\"tool_(call|result)\"")
  list(LENGTH lines expected)
  string(REGEX MATCHALL "\n" newlines "${out}")
  list(LENGTH newlines got)
  if(NOT got EQUAL expected)
    message(FATAL_ERROR "${name}: ${got} output lines for ${expected} tool events")
  endif()
  file(READ "${data_dir}/fingerprints/${name}" golden)
  if(NOT out STREQUAL golden)
    message(FATAL_ERROR "${name}: output differs from tests/data/fingerprints/${name}\n${out}")
  endif()
endforeach()
