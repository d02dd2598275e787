cmake_minimum_required(VERSION 3.25)
# ctest: `loopguard config` as a user runs it, with LOOPGUARD_CONFIG and the variables.
#   -DLOOPGUARD=path/to/loopguard -DWORK=scratch/dir -DCASE=<name>
file(REMOVE_RECURSE "${WORK}/${CASE}")
file(MAKE_DIRECTORY "${WORK}/${CASE}")
set(dir "${WORK}/${CASE}")
file(WRITE "${dir}/token" "s3cret-token\n")
file(WRITE "${dir}/sdk.json" "{\"preset\": \"aggressive\",
  \"detectors\": {\"exact\": {\"warn_at\": 4, \"critical_at\": 9}},
  \"daemon\": {\"url\": \"ws://127.0.0.1:7070\", \"token_file\": \"${dir}/token\",
             \"swarm\": \"from-file\", \"worker\": \"w-file\", \"heartbeat_ms\": 2500}}\n")

# Runs `env VARS... loopguard config ARGS...`; VARS and ARGS are lists.
function(run_config vars)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LOOPGUARD_CONFIG
                          --unset=LOOPGUARD_DAEMON --unset=LOOPGUARD_TOKEN
                          --unset=LOOPGUARD_SWARM --unset=LOOPGUARD_WORKER ${vars}
                          "${LOOPGUARD}" config ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

# A value of the printed JSON by its path (string(JSON ...)); "" when absent.
function(json_at var)
  string(JSON v ERROR_VARIABLE e GET "${out}" ${ARGN})
  if(e)
    set(v "")
  endif()
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

if(CASE STREQUAL "print_env_over_file")
  run_config("LOOPGUARD_CONFIG=${dir}/sdk.json;LOOPGUARD_SWARM=from-env" --print-config)
  json_at(preset preset)
  json_at(warn detectors exact warn_at)
  json_at(url daemon url)
  json_at(swarm daemon swarm)
  json_at(worker daemon worker)
  json_at(heartbeat daemon heartbeat_ms)
  json_at(token daemon token)
  set(ok FALSE)
  if(rc EQUAL 0 AND preset STREQUAL "aggressive" AND warn EQUAL 4 AND
     url STREQUAL "ws://127.0.0.1:7070" AND swarm STREQUAL "from-env" AND
     worker STREQUAL "w-file" AND heartbeat EQUAL 2500 AND token STREQUAL "<set>" AND
     NOT out MATCHES "s3cret")
    set(ok TRUE)
  endif()
  expect(ok "--print-config: the file's values, LOOPGUARD_SWARM over the file, the token redacted")
elseif(CASE STREQUAL "flag_over_env_file")
  # --config wins over LOOPGUARD_CONFIG; without a daemon object there is no token.
  file(WRITE "${dir}/plain.json" "{\"preset\": \"conservative\"}")
  run_config("LOOPGUARD_CONFIG=${dir}/sdk.json" --config "${dir}/plain.json" --print-config)
  json_at(preset preset)
  json_at(token daemon token)
  json_at(url daemon url)
  set(ok FALSE)
  if(rc EQUAL 0 AND preset STREQUAL "conservative" AND token STREQUAL "" AND url STREQUAL "")
    set(ok TRUE)
  endif()
  expect(ok "--config must win over LOOPGUARD_CONFIG")
elseif(CASE STREQUAL "unknown_key")
  file(WRITE "${dir}/bad.json" "{\"daemon\": {\"outbox_size\": 5}}")
  run_config("" --config "${dir}/bad.json" --print-config)
  set(ok FALSE)
  if(rc EQUAL 2 AND out STREQUAL "" AND
     err MATCHES "^loopguard config: [^\n]*bad.json: daemon.outbox_size: unknown key, expected one of [^\n]*\n$")
    set(ok TRUE)
  endif()
  expect(ok "an unknown key: one line naming it, exit 2")
elseif(CASE STREQUAL "bad_variable")
  run_config("LOOPGUARD_CONFIG=${dir}/sdk.json;LOOPGUARD_DAEMON=http://x:1" --print-config)
  set(ok FALSE)
  if(rc EQUAL 2 AND err MATCHES "^loopguard config: LOOPGUARD_DAEMON: daemon.url: [^\n]*\n$")
    set(ok TRUE)
  endif()
  expect(ok "a bad variable: one line naming it, exit 2")
elseif(CASE STREQUAL "replay_accepts_daemon")
  # The same file judges a replay: its daemon object is checked and ignored.
  file(WRITE "${dir}/run.jsonl"
    "{\"kind\":\"tool_call\",\"tool\":\"read_file\",\"args\":{\"path\":\"a\"}}\n")
  execute_process(COMMAND "${LOOPGUARD}" replay --config "${dir}/sdk.json" "${dir}/run.jsonl"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  set(ok FALSE)
  if(rc EQUAL 0)
    set(ok TRUE)
  endif()
  expect(ok "replay --config must take the SDK's config file with a daemon object")
  file(WRITE "${dir}/bad.json" "{\"daemon\": {\"outbox\": 0}}")
  execute_process(COMMAND "${LOOPGUARD}" replay --config "${dir}/bad.json" "${dir}/run.jsonl"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  set(ok FALSE)
  if(rc EQUAL 2 AND err MATCHES "bad.json: daemon.outbox: expected an integer in 1..10000000")
    set(ok TRUE)
  endif()
  expect(ok "replay --config: a bad daemon key is still refused, named")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
file(REMOVE_RECURSE "${dir}")
