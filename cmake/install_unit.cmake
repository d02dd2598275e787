# Run by `cmake --install` and CPack (install(CODE) in cmake/packaging.cmake): installs
# packaging/loopguardd.service into <prefix>/lib/systemd/system with ExecStart's
# /usr/bin/loopguardd replaced by <prefix>/<bindir>/loopguardd, the prefix of this install.
#   LOOPGUARD_UNIT_SOURCE  the unit file          LOOPGUARD_UNIT_BINDIR  bin, relative
#   LOOPGUARD_UNIT_WORK    a scratch directory of the build tree
file(READ "${LOOPGUARD_UNIT_SOURCE}" unit)
string(FIND "${unit}" "ExecStart=/usr/bin/loopguardd " at)
if(at EQUAL -1)
  message(FATAL_ERROR "${LOOPGUARD_UNIT_SOURCE}: no line 'ExecStart=/usr/bin/loopguardd ...'")
endif()
string(REPLACE "/usr/bin/loopguardd" "${CMAKE_INSTALL_PREFIX}/${LOOPGUARD_UNIT_BINDIR}/loopguardd"
       unit "${unit}")
# One scratch file per destination: an install and a CPack run may overlap (ctest -j).
string(MD5 key "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(generated "${LOOPGUARD_UNIT_WORK}/${key}/loopguardd.service")
file(WRITE "${generated}" "${unit}")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" TYPE FILE
     FILES "${generated}")
