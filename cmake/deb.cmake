# The .deb (docs/packaging.md, "Debian package"): `cpack -G DEB` in the build directory, or
# `cmake --build build --target package`. Everything `cmake --install` installs, under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME loopguard)
set(CPACK_PACKAGE_VENDOR "Loopguard")
set(CPACK_PACKAGE_CONTACT "Loopguard maintainers <maintainers@loopguard.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "loopguardd, the swarm daemon (with a systemd unit), the loopguard command (replay, eval,\n\
fingerprint, simulate), the C++ worker SDK (headers, static libraries, CMake package,\n\
pkg-config file) and the C API library libloopguard.so.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# What the SDK's headers and static libraries need at build time (not found by shlibdeps).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "nlohmann-json3-dev (>= 3.11), libboost-dev (>= 1.81), \
libxxhash-dev, libssl-dev, pkg-config")
include(CPack)
