# CMake toolchain for cross-building rocmd (and its dependencies, see
# scripts/build-windows.sh) for 64-bit Windows with Debian's mingw-w64.
# Libraries and headers are searched only in the target root (the deps cache
# prefix, passed as ROCMD_WIN_PREFIX) and the mingw sysroot, never in /usr.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(TOOLCHAIN_PREFIX x86_64-w64-mingw32)

# The POSIX threading flavour of the compiler: libuv and winpthreads need it.
find_program(CMAKE_C_COMPILER NAMES ${TOOLCHAIN_PREFIX}-gcc-posix ${TOOLCHAIN_PREFIX}-gcc)
find_program(CMAKE_CXX_COMPILER NAMES ${TOOLCHAIN_PREFIX}-g++-posix ${TOOLCHAIN_PREFIX}-g++)
set(CMAKE_RC_COMPILER ${TOOLCHAIN_PREFIX}-windres)
set(CMAKE_AR ${TOOLCHAIN_PREFIX}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${TOOLCHAIN_PREFIX}-ranlib CACHE FILEPATH "")

if(NOT ROCMD_WIN_PREFIX AND DEFINED ENV{ROCMD_WIN_PREFIX})
  set(ROCMD_WIN_PREFIX $ENV{ROCMD_WIN_PREFIX})
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${TOOLCHAIN_PREFIX} ${ROCMD_WIN_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must see the cross prefix only.
if(ROCMD_WIN_PREFIX)
  set(ENV{PKG_CONFIG_LIBDIR} ${ROCMD_WIN_PREFIX}/lib/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
endif()

