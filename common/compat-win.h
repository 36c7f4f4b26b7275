/*
 * POSIX types the Windows C runtime lacks, force-included into every file of
 * the Windows build (CMakeLists.txt, -include) so shared headers need no
 * #ifdef. On Windows the "uid" of a peer carries its process id and the "gid"
 * whether its token is in Administrators (see daemon/ipc-win.c).
 */
#ifndef ROCMD_COMPAT_WIN_H
#define ROCMD_COMPAT_WIN_H

#ifdef _WIN32
typedef unsigned int uid_t;
typedef unsigned int gid_t;
#endif

#endif
