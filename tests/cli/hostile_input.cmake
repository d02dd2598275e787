cmake_minimum_required(VERSION 3.25)
# ctest cli.hostile_input.*: input beyond the limits (docs/operations.md, "Limits") is exit 2 with
# the file, the line and what was wrong, never an abort (rc 134) or a crash (rc 139).
#   cmake -DLOOPGUARD=<loopguard> -DWORK=<scratch dir> -DCASE=<case> -P hostile_input.cmake
if(NOT LOOPGUARD OR NOT WORK OR NOT CASE)
  message(FATAL_ERROR "usage: cmake -DLOOPGUARD=<binary> -DWORK=<dir> -DCASE=<case> -P ...")
endif()
file(MAKE_DIRECTORY "${WORK}")
set(trace "${WORK}/${CASE}.jsonl")

# Runs loopguard ARGN; fails unless it exits 2 with stderr matching `pattern`.
function(expect_bad_input pattern)
  execute_process(COMMAND ${LOOPGUARD} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${pattern}")
    message(FATAL_ERROR "loopguard ${ARGN}: expected exit 2 and stderr matching '${pattern}'\n"
                        "exit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endfunction()

set(ok_line [=[{"kind": "text", "content": "hello"}]=])
string(REPEAT "[" 20000 open)
string(REPEAT "]" 20000 close)
if(CASE STREQUAL "number_in_args")
  file(WRITE "${trace}" "${ok_line}\n{\"kind\": \"tool_call\", \"tool\": \"t\", \"args\": {\"a\": 1e400}}\n")
  expect_bad_input("${CASE}\\.jsonl:2: a number is beyond a double's range" replay "${trace}")
  expect_bad_input("${CASE}\\.jsonl:2: a number is beyond a double's range" fingerprint "${trace}")
elseif(CASE STREQUAL "number_in_t")
  file(WRITE "${trace}" "{\"kind\": \"text\", \"content\": \"x\", \"t\": -1e400}\n")
  expect_bad_input("${CASE}\\.jsonl:1: a number is beyond a double's range" replay "${trace}")
elseif(CASE STREQUAL "deep_args")
  file(WRITE "${trace}"
       "{\"kind\": \"tool_call\", \"tool\": \"t\", \"args\": {\"a\": ${open}${close}}}\n")
  expect_bad_input("${CASE}\\.jsonl:1: arrays and objects are nested more than 128" replay "${trace}")
  expect_bad_input("${CASE}\\.jsonl:1: arrays and objects are nested more than 128"
                   fingerprint "${trace}")
elseif(CASE STREQUAL "identifier")
  file(WRITE "${trace}" [=[{"kind": "text", "worker": "w\udcff", "content": "x"}]=])
  expect_bad_input("${CASE}\\.jsonl:1: worker: expected valid UTF-8" replay "${trace}")
elseif(CASE STREQUAL "config")
  file(WRITE "${trace}" "${ok_line}\n")
  file(WRITE "${WORK}/big.json" [=[{"exact": {"window": 1e400}}]=])
  expect_bad_input("big\\.json: a number is beyond a double's range"
                   replay --config "${WORK}/big.json" "${trace}")
  file(WRITE "${WORK}/deep.json" "{\"x\": ${open}${close}}")
  expect_bad_input("deep\\.json: arrays and objects are nested more than 128"
                   replay --config "${WORK}/deep.json" "${trace}")
elseif(CASE STREQUAL "pairs")
  file(WRITE "${WORK}/pairs.jsonl" "{\"a\": \"x\", \"b\": \"y\"}\n{\"a\": \"x\", \"b\": 1e400}\n")
  expect_bad_input("pairs\\.jsonl:2: a number is beyond a double's range"
                   similarity --pairs "${WORK}/pairs.jsonl")
else()
  message(FATAL_ERROR "unknown case ${CASE}")
endif()
