/*
 * fault-preload: the fault harness's LD_PRELOAD library for rocmd
 * (tests/fault/fault.sh). It adds the two failure points the daemon's own
 * failpoint layer (common/failpoint.h) cannot reach:
 *
 * - The database's file operations. SQLite does its own I/O through its
 *   unix VFS, so this library registers, as the default VFS, a thin layer
 *   over it whose every open, read, write, sync, truncate and delete passes a
 *   failure point ("db.open", "db.read", "db.write", "db.sync",
 *   "db.truncate", "db.delete"). Armed by ROCMD_DBFAULT=NAME:COUNT:KIND, the
 *   COUNT-th hit (NAME "*": of any of them) fails: KILL (SIGKILL), EIO,
 *   ENOSPC, EACCES (the codes the unix VFS gives for them: SQLITE_IOERR_* for
 *   EIO, SQLITE_FULL for ENOSPC on a write, SQLITE_CANTOPEN for a refused
 *   open) or SHORT (a write of half its bytes, then SQLITE_FULL,
 *   what the unix VFS reports for a short write).
 * - Short writes in the file layer. common/failpoint.c, armed with KIND
 *   SHORT, calls rocmd_fault_short_write (found with dlsym), and the next
 *   write(2) of that thread writes half its bytes and the one after fails
 *   with ENOSPC.
 *
 * ROCMD_FAILPOINT_LOG and ROCMD_FAILPOINT_PID are shared with failpoint.c:
 * every database hit is logged as "db N NAME", the fault as "fired db N NAME
 * KIND". Without ROCMD_DBFAULT and the log, the VFS layer only passes calls
 * through. Linux only; nothing of rocmd links it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

void rocmd_fault_short_write(void);
ssize_t write(int fd, const void *buf, size_t n);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);

/* ---- short writes of the file layer ---- */

/* 1: the next write is cut to half; 2: the next write fails with ENOSPC. */
static __thread int short_state;

void
rocmd_fault_short_write(void)
{
	short_state = 1;
}

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);

/* Whether this write is the one to cut (*N halved) or to fail (-1). */
static int
short_turn(size_t *n)
{
	if (short_state == 1 && *n > 0) {
		short_state = 2;
		*n = *n > 1 ? *n / 2 : 1;
		return 0;
	}
	if (short_state == 2) {
		short_state = 0;
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	if (real_write == NULL)
		*(void **)&real_write = dlsym(RTLD_NEXT, "write");
	if (short_state != 0 && short_turn(&n) < 0)
		return -1;
	return real_write(fd, buf, n);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (real_pwrite == NULL)
		*(void **)&real_pwrite = dlsym(RTLD_NEXT, "pwrite");
	if (short_state != 0 && short_turn(&n) < 0)
		return -1;
	return real_pwrite(fd, buf, n, off);
}

/* ---- the database's failure points ---- */

enum kind { K_NONE, K_KILL, K_EIO, K_ENOSPC, K_EACCES, K_SHORT };

static const char *const kind_names[] = {"", "KILL", "EIO", "ENOSPC", "EACCES", "SHORT"};

static int log_fd = -1;
static char want_name[32];
static uint64_t want_count;
static enum kind want_kind;
static uint64_t db_hits;
static sqlite3_vfs *base_vfs;
static sqlite3_vfs fault_vfs;

static void
log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
log_line(const char *fmt, ...)
{
	char line[200];
	va_list ap;
	int n;

	if (log_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	line[n - 1] = '\n';
	if (real_write == NULL)
		*(void **)&real_write = dlsym(RTLD_NEXT, "write");
	if (real_write(log_fd, line, (size_t)n) < 0) {
		/* the log is best effort */
	}
}

/* The fault due at this hit of NAME, or K_NONE. */
static enum kind
hit(const char *name)
{
	uint64_t n;

	if (log_fd < 0 && want_kind == K_NONE)
		return K_NONE;
	n = __atomic_add_fetch(&db_hits, 1, __ATOMIC_SEQ_CST);
	log_line("db %llu %s\n", (unsigned long long)n, name);
	if (want_kind == K_NONE || n != want_count ||
	    (strcmp(want_name, "*") != 0 && strcmp(want_name, name) != 0))
		return K_NONE;
	log_line("fired db %llu %s %s\n", (unsigned long long)n, name, kind_names[want_kind]);
	if (want_kind == K_KILL) {
		raise(SIGKILL);
		_exit(137);
	}
	return want_kind;
}

/* The code the unix VFS gives for fault K at an operation whose I/O error
 * is IOERR: SQLITE_FULL for a write that found no space, else IOERR (a
 * refused open is SQLITE_CANTOPEN whatever the errno). */
static int
code_for(enum kind k, int ioerr)
{
	return k == K_ENOSPC && ioerr == SQLITE_IOERR_WRITE ? SQLITE_FULL : ioerr;
}

struct fault_file {
	sqlite3_file base;
	sqlite3_file *real; /* follows this struct in the same allocation */
};

static int
f_close(sqlite3_file *f)
{
	struct fault_file *p = (struct fault_file *)f;
	int rc = p->real->pMethods != NULL ? p->real->pMethods->xClose(p->real) : SQLITE_OK;

	return rc;
}

static int
f_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct fault_file *p = (struct fault_file *)f;
	enum kind k = hit("db.read");

	if (k != K_NONE && k != K_SHORT)
		return code_for(k, SQLITE_IOERR_READ);
	return p->real->pMethods->xRead(p->real, buf, amt, off);
}

static int
f_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct fault_file *p = (struct fault_file *)f;
	enum kind k = hit("db.write");

	if (k == K_SHORT) {
		if (amt > 1)
			p->real->pMethods->xWrite(p->real, buf, amt / 2, off);
		return SQLITE_FULL;
	}
	if (k != K_NONE)
		return code_for(k, SQLITE_IOERR_WRITE);
	return p->real->pMethods->xWrite(p->real, buf, amt, off);
}

static int
f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct fault_file *p = (struct fault_file *)f;
	enum kind k = hit("db.truncate");

	if (k != K_NONE && k != K_SHORT)
		return code_for(k, SQLITE_IOERR_TRUNCATE);
	return p->real->pMethods->xTruncate(p->real, size);
}

static int
f_sync(sqlite3_file *f, int flags)
{
	struct fault_file *p = (struct fault_file *)f;
	enum kind k = hit("db.sync");

	if (k != K_NONE && k != K_SHORT)
		return code_for(k, SQLITE_IOERR_FSYNC);
	return p->real->pMethods->xSync(p->real, flags);
}

/* The rest pass straight through. */
#define REAL(f) (((struct fault_file *)(f))->real)
static int
f_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int
f_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int
f_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int
f_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int
f_fcntl(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int
f_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int
f_devchar(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int
f_shmmap(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}
static int
f_shmlock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void
f_shmbarrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int
f_shmunmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int
f_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	return REAL(f)->pMethods->xFetch(REAL(f), off, amt, pp);
}
static int
f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static sqlite3_io_methods fault_methods = {
    3,        f_close,   f_read,   f_write,    f_truncate,   f_sync,     f_size,
    f_lock,   f_unlock,  f_reserved, f_fcntl,  f_sector,     f_devchar,  f_shmmap,
    f_shmlock, f_shmbarrier, f_shmunmap, f_fetch, f_unfetch,
};

static int
v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
	struct fault_file *p = (struct fault_file *)f;
	enum kind k = hit("db.open");
	int rc;

	p->base.pMethods = NULL;
	p->real = (sqlite3_file *)(p + 1);
	p->real->pMethods = NULL;
	if (k != K_NONE && k != K_SHORT)
		return code_for(k, SQLITE_CANTOPEN);
	rc = base_vfs->xOpen(base_vfs, name, p->real, flags, out_flags);
	/* The unix VFS's files have version 3 methods (WAL's shared memory). */
	if (p->real->pMethods != NULL)
		p->base.pMethods = &fault_methods;
	return rc;
}

static int
v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	enum kind k = hit("db.delete");

	if (k != K_NONE && k != K_SHORT)
		return code_for(k, SQLITE_IOERR_DELETE);
	return base_vfs->xDelete(base_vfs, name, sync_dir);
}

#define BASE(m, ...) base_vfs->m(base_vfs, __VA_ARGS__)
static int
v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	return BASE(xAccess, name, flags, out);
}
static int
v_fullpath(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	return BASE(xFullPathname, name, n, out);
}
static void *
v_dlopen(sqlite3_vfs *vfs, const char *name)
{
	return BASE(xDlOpen, name);
}
static void
v_dlerror(sqlite3_vfs *vfs, int n, char *out)
{
	BASE(xDlError, n, out);
}
static void (*v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	return BASE(xDlSym, h, sym);
}
static void
v_dlclose(sqlite3_vfs *vfs, void *h)
{
	BASE(xDlClose, h);
}
static int
v_random(sqlite3_vfs *vfs, int n, char *out)
{
	return BASE(xRandomness, n, out);
}
static int
v_sleep(sqlite3_vfs *vfs, int us)
{
	return BASE(xSleep, us);
}
static int
v_time(sqlite3_vfs *vfs, double *out)
{
	return BASE(xCurrentTime, out);
}
static int
v_lasterror(sqlite3_vfs *vfs, int n, char *out)
{
	return BASE(xGetLastError, n, out);
}
static int
v_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	return BASE(xCurrentTimeInt64, out);
}
static int
v_setsyscall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr p)
{
	return BASE(xSetSystemCall, name, p);
}
static sqlite3_syscall_ptr
v_getsyscall(sqlite3_vfs *vfs, const char *name)
{
	return BASE(xGetSystemCall, name);
}
static const char *
v_nextsyscall(sqlite3_vfs *vfs, const char *name)
{
	return BASE(xNextSystemCall, name);
}

static enum kind
kind_parse(const char *s)
{
	for (int k = K_KILL; k <= K_SHORT; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return (enum kind)k;
	return K_NONE;
}

__attribute__((constructor)) static void
fault_preload_init(void)
{
	const char *pid = getenv("ROCMD_FAILPOINT_PID"), *l = getenv("ROCMD_FAILPOINT_LOG");
	const char *spec = getenv("ROCMD_DBFAULT");

	if (pid != NULL && *pid != '\0' && strtol(pid, NULL, 10) != (long)getpid())
		return;
	if (l != NULL && *l != '\0')
		log_fd = open(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (spec != NULL && *spec != '\0') {
		const char *c1 = strchr(spec, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
		size_t n = c1 != NULL ? (size_t)(c1 - spec) : 0;
		if (c2 == NULL || n == 0 || n >= sizeof(want_name)) {
			fprintf(stderr, "fault-preload: ROCMD_DBFAULT is NAME:COUNT:KIND\n");
			_exit(2);
		}
		memcpy(want_name, spec, n);
		want_count = strtoull(c1 + 1, NULL, 10);
		want_kind = kind_parse(c2 + 1);
		if (want_kind == K_NONE || want_count == 0) {
			fprintf(stderr, "fault-preload: bad ROCMD_DBFAULT %s\n", spec);
			_exit(2);
		}
	}
	if (log_fd < 0 && want_kind == K_NONE)
		return;
	if (sqlite3_initialize() != SQLITE_OK || (base_vfs = sqlite3_vfs_find(NULL)) == NULL)
		return;
	fault_vfs = (sqlite3_vfs){
	    .iVersion = 3,
	    .szOsFile = (int)sizeof(struct fault_file) + base_vfs->szOsFile,
	    .mxPathname = base_vfs->mxPathname,
	    .zName = "rocmd-fault",
	    .xOpen = v_open,
	    .xDelete = v_delete,
	    .xAccess = v_access,
	    .xFullPathname = v_fullpath,
	    .xDlOpen = v_dlopen,
	    .xDlError = v_dlerror,
	    .xDlSym = v_dlsym,
	    .xDlClose = v_dlclose,
	    .xRandomness = v_random,
	    .xSleep = v_sleep,
	    .xCurrentTime = v_time,
	    .xGetLastError = v_lasterror,
	    .xCurrentTimeInt64 = v_time64,
	    .xSetSystemCall = v_setsyscall,
	    .xGetSystemCall = v_getsyscall,
	    .xNextSystemCall = v_nextsyscall,
	};
	sqlite3_vfs_register(&fault_vfs, 1);
}
