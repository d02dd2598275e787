cmake_minimum_required(VERSION 3.25)
# ctest: `loopguard eval` as a user runs it (docs/eval.md).
#   -DLOOPGUARD=path/to/loopguard -DDATA=tests/data -DCASE=<name>
function(run_eval)
  execute_process(COMMAND "${LOOPGUARD}" eval ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

# A value of the --json document, by path (string(JSON) GET).
function(json_get var)
  string(JSON value ERROR_VARIABLE json_error GET "${out}" ${ARGN})
  if(json_error)
    message(FATAL_ERROR "--json output: ${ARGN}: ${json_error}\n${out}")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

set(E "${DATA}/eval")
if(CASE STREQUAL "defaults")
  # The guard on the defaults: every bundled example and every real recording agrees with the
  # balanced preset, and the held-out set too when it is there, but for the disagreements known
  # and documented (tests/data/real-heldout/README.md, docs/detectors.md "Held out"): exactly
  # these, so that a new one fails, and so does one that went away (then it leaves this list).
  # Regular expressions ("." for the ";" a CMake list cannot hold).
  set(known
    "real-miniswe-pytest-6197-healthy[.]jsonl: healthy. first test_fix warn at event 96 "
    "real-miniswe-sphinx-8035-healthy[.]jsonl: healthy. first result warn at event 110 "
    "real-autocoderover-matplotlib-25332-healthy[.]jsonl: healthy. first result warn at event 16 "
    "real-autocoderover-django-12286-healthy[.]jsonl: healthy. first summary warn at event 12 "
    "real-autocoderover-django-14915-healthy[.]jsonl: healthy. first result warn at event 11 "
    "real-autocoderover-django-17087-healthy[.]jsonl: healthy. first result warn at event 12 "
    "real-autocoderover-matplotlib-25311-healthy[.]jsonl: healthy. first result warn at event 20 "
    "real-autocoderover-sympy-16281-healthy[.]jsonl: healthy. first result warn at event 24 "
    "real-sweagent-sympy-15678-healthy[.]jsonl: healthy. first exact warn at event 24 ")
  set(dirs "${DATA}/traces" "${DATA}/real")
  if(IS_DIRECTORY "${DATA}/real-heldout")
    list(APPEND dirs "${DATA}/real-heldout")
  else()
    set(known "")
  endif()
  list(LENGTH known n_known)
  run_eval(--tolerance ${n_known} ${dirs})
  set(ok FALSE)
  if(rc EQUAL 0 AND out MATCHES "\ndisagreements: ${n_known}\n" AND out MATCHES "\nall +[0-9]+ ")
    set(ok TRUE)
  endif()
  foreach(line IN LISTS known)
    if(NOT out MATCHES "${line}")
      set(ok FALSE)
    endif()
  endforeach()
  expect(ok "the balanced preset must agree with every labelled recording but the known ${n_known}")
elseif(CASE STREQUAL "disagreements")
  run_eval("${E}/labelled-caught.jsonl" "${E}/labelled-false-alarm.jsonl"
           "${E}/labelled-missed-loop.jsonl")
  set(ok FALSE)
  if(rc EQUAL 1 AND out MATCHES "\ndisagreements: 2\n"
     AND out MATCHES "labelled-false-alarm.jsonl: healthy; first exact warn at event 4 \\(read_file\\)"
     AND out MATCHES "labelled-missed-loop.jsonl: loop within 5; no detection"
     AND out MATCHES "\ndemo +2 +1 +1 +1 +1 +0.50 +0.50 +-2.0 +-2\n")
    set(ok TRUE)
  endif()
  expect(ok "a missed loop and a false alarm must be listed, counted, and exit 1")
  run_eval(--tolerance 2 "${E}/labelled-caught.jsonl" "${E}/labelled-false-alarm.jsonl"
           "${E}/labelled-missed-loop.jsonl")
  set(ok FALSE)
  if(rc EQUAL 0 AND out MATCHES "\ndisagreements: 2\n")
    set(ok TRUE)
  endif()
  expect(ok "--tolerance 2 accepts two disagreements")
  run_eval(--tolerance 1 "${E}/labelled-false-alarm.jsonl" "${E}/labelled-missed-loop.jsonl")
  set(ok FALSE)
  if(rc EQUAL 1)
    set(ok TRUE)
  endif()
  expect(ok "--tolerance 1 does not accept two disagreements")
elseif(CASE STREQUAL "json")
  run_eval(--json "${E}")
  set(ok FALSE)
  if(rc EQUAL 1)
    set(ok TRUE)
  endif()
  expect(ok "--json over the eval directory exits 1 (it holds two disagreements)")
  json_get(disagreements disagreements)
  json_get(caught all caught)
  json_get(recall all recall)
  json_get(delay by_source demo median_delay)
  string(JSON n LENGTH "${out}" traces)
  json_get(first_file traces 0 file)
  json_get(first_delay traces 0 delay)
  json_get(unlabelled_rate traces 3 per_100_calls exact)
  string(JSON unlabelled_label TYPE "${out}" traces 3 label)
  set(ok FALSE)
  if(disagreements EQUAL 2 AND caught EQUAL 1 AND recall STREQUAL "0.5" AND delay STREQUAL "-2.0"
     AND n EQUAL 4 AND first_file MATCHES "labelled-caught.jsonl$" AND first_delay EQUAL -2
     AND unlabelled_rate STREQUAL "50.0" AND unlabelled_label STREQUAL "NULL")
    set(ok TRUE)
  endif()
  expect(ok "--json fields: disagreements ${disagreements}, caught ${caught}, recall ${recall}, delay ${delay}, traces ${n}, ${first_file} ${first_delay}, rate ${unlabelled_rate}, label ${unlabelled_label}")
elseif(CASE STREQUAL "unlabelled")
  run_eval("${E}/unlabelled.jsonl")
  set(ok FALSE)
  if(rc EQUAL 0 AND out MATCHES "0 labelled recordings \\(0 loops, 0 healthy\\), 1 unlabelled"
     AND out MATCHES "unlabelled.jsonl +4 +exact 50.0\n")
    set(ok TRUE)
  endif()
  expect(ok "an unlabelled recording gives its detections per 100 calls")
elseif(CASE STREQUAL "bad_input")
  run_eval("${DATA}/bad/unknown_kind_line2.jsonl" "${E}/labelled-caught.jsonl")
  set(ok FALSE)
  if(rc EQUAL 2 AND err MATCHES "unknown_kind_line2.jsonl:2: kind: expected one of"
     AND out MATCHES "unreadable: 1\n")
    set(ok TRUE)
  endif()
  expect(ok "an unreadable recording is named with its line, reported, and exits 2")
  run_eval(--preset nope "${E}")
  set(ok FALSE)
  if(rc EQUAL 2 AND err MATCHES "unknown preset \"nope\"")
    set(ok TRUE)
  endif()
  expect(ok "an unknown preset exits 2 naming it")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
