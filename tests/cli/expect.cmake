# The check every cli test script uses: `expect(ok "message")` fails the test with the message,
# the exit code and both outputs of the last run (rc, out, err in the caller's scope) when the
# variable named `ok` is false.
function(expect cond message)
  if(NOT ${${cond}})
    message(FATAL_ERROR "${message}\nexit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endfunction()
