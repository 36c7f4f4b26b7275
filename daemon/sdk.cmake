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
# Discovery, inspection and watching are shared; the platform layer differs:
# sysroot resolution, the registry, child processes, file facts, loading a
# library (the HIP probe).
target_sources(rocmd_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sysroot.c
  ${CMAKE_CURRENT_LIST_DIR}/sdk-discover.c
  ${CMAKE_CURRENT_LIST_DIR}/rocblas-lib.c
  ${CMAKE_CURRENT_LIST_DIR}/gpu-kfd.c
  ${CMAKE_CURRENT_LIST_DIR}/gpu-hip.c
  ${CMAKE_CURRENT_LIST_DIR}/sdk.c
  ${CMAKE_CURRENT_LIST_DIR}/sdk-watch.c
)
if(WIN32)
  # HKLM read with the registry API; libarchive linked statically
  # (archive-dl-win.c: the sym_ pointers archive-dl.h declares, set at build time).
  target_sources(rocmd_core PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/archive-dl-win.c
    ${CMAKE_CURRENT_LIST_DIR}/sysroot-win.c
    ${CMAKE_CURRENT_LIST_DIR}/registry-win.c
    ${CMAKE_CURRENT_LIST_DIR}/child-win.c
    ${CMAKE_CURRENT_LIST_DIR}/fsinfo-win.c
    ${CMAKE_CURRENT_LIST_DIR}/sdk-win.c
  )
  set(ROCMD_DL_SOURCE ${CMAKE_CURRENT_LIST_DIR}/dl-win.c)
else()
  target_sources(rocmd_core PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/sysroot-unix.c
    ${CMAKE_CURRENT_LIST_DIR}/registry-file.c
    ${CMAKE_CURRENT_LIST_DIR}/child-unix.c
    ${CMAKE_CURRENT_LIST_DIR}/fsinfo-unix.c
    ${CMAKE_CURRENT_LIST_DIR}/sdk-unix.c
  )
  set(ROCMD_DL_SOURCE ${CMAKE_CURRENT_LIST_DIR}/dl-unix.c)
endif()
target_compile_definitions(rocmd_core PRIVATE
  ROCMD_LIBEXECDIR="${CMAKE_INSTALL_FULL_LIBEXECDIR}")
# Loads an SDK's HIP runtime in a process of its own (gpu-hip.c runs it); on
# Windows it sits beside rocmd.exe.
add_executable(rocmd-hip-probe ${CMAKE_CURRENT_LIST_DIR}/hip-probe.c ${ROCMD_DL_SOURCE})
target_include_directories(rocmd-hip-probe PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(rocmd-hip-probe PRIVATE ${CMAKE_DL_LIBS})
if(WIN32)
  target_link_libraries(rocmd-hip-probe PRIVATE shell32)
  install(TARGETS rocmd-hip-probe DESTINATION ${CMAKE_INSTALL_BINDIR})
else()
  install(TARGETS rocmd-hip-probe DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/rocmd)
endif()
