cmake_minimum_required(VERSION 3.25)
# ctest cli.similarity.pairs: `loopguard similarity` over tests/data/similarity/pairs.jsonl must
# print exactly the expected files, and a bad line must fail with a message naming the line.
#   cmake -DLOOPGUARD=<loopguard binary> -DDATA=<tests/data/similarity> -P similarity_pairs.cmake
if(NOT LOOPGUARD OR NOT DATA)
  message(FATAL_ERROR "usage: cmake -DLOOPGUARD=<binary> -DDATA=<dir> -P similarity_pairs.cmake")
endif()

function(expect_output expected_file)
  execute_process(COMMAND ${LOOPGUARD} similarity --pairs ${DATA}/pairs.jsonl ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "loopguard similarity ${ARGN} exited ${rc}: ${err}")
  endif()
  file(READ ${DATA}/${expected_file} expected)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "loopguard similarity ${ARGN}: output differs from ${expected_file}\n"
                        "--- got:\n${out}--- expected:\n${expected}")
  endif()
endfunction()

expect_output(pairs.expected.jsonl)
expect_output(pairs.ratio_cutoff90_process.expected.jsonl --scorer ratio --cutoff 90 --process)

# Line 3 of bad_pairs.jsonl has a number for "b": non-zero exit, the line named, no results.
execute_process(COMMAND ${LOOPGUARD} similarity --pairs ${DATA}/bad_pairs.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a bad pairs file was accepted; output:\n${out}")
endif()
if(NOT err MATCHES "bad_pairs\\.jsonl:3: ")
  message(FATAL_ERROR "the error does not name line 3: ${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "results were printed for a file with a bad line:\n${out}")
endif()
