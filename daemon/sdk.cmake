# SDK discovery: finding and watching HIP SDK installs, rocBLAS library
# inspection, GPU discovery (included from daemon/CMakeLists.txt).
pkg_check_modules(MSGPACK REQUIRED IMPORTED_TARGET msgpack)
target_link_libraries(rocmd_core PUBLIC PkgConfig::MSGPACK)
# Portable parts: the method table, version logic, path mapping, the shared
# common/ helpers (only SDK discovery uses them so far).
target_sources(rocmd_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/methods-sdk.c
  ${CMAKE_CURRENT_LIST_DIR}/sdk-version.c
  ${CMAKE_SOURCE_DIR}/common/amdgpu-elf.c
  ${CMAKE_SOURCE_DIR}/common/text.c
)
if(WIN32)
  # Not ported yet (walking, watching, child processes, the registry): the
  # daemon runs without discovery. The Windows layout rules are tested on
  # Linux (tests/sdk/test-sdk.c) against a Windows-shaped tree.
  target_sources(rocmd_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sdk-none.c)
else()
  target_sources(rocmd_core PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/sysroot.c
    ${CMAKE_CURRENT_LIST_DIR}/sdk-discover.c
    ${CMAKE_CURRENT_LIST_DIR}/rocblas-lib.c
    ${CMAKE_CURRENT_LIST_DIR}/gpu-kfd.c
    ${CMAKE_CURRENT_LIST_DIR}/gpu-hip.c
    ${CMAKE_CURRENT_LIST_DIR}/sdk.c
    ${CMAKE_CURRENT_LIST_DIR}/sdk-watch.c
    ${CMAKE_CURRENT_LIST_DIR}/registry-file.c
    ${CMAKE_CURRENT_LIST_DIR}/child-unix.c
  )
  target_compile_definitions(rocmd_core PRIVATE
    ROCMD_LIBEXECDIR="${CMAKE_INSTALL_FULL_LIBEXECDIR}")
  # Loads an SDK's HIP runtime in a process of its own (gpu-hip.c runs it).
  add_executable(rocmd-hip-probe ${CMAKE_CURRENT_LIST_DIR}/hip-probe.c)
  target_link_libraries(rocmd-hip-probe PRIVATE ${CMAKE_DL_LIBS})
  install(TARGETS rocmd-hip-probe DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/rocmd)
endif()
