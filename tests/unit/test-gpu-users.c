/*
 * Who holds the GPU or a target's files (daemon/deploy/gpu-users-unix.c), with real
 * processes: a child listed in a KFD proc folder under a sandbox root, a
 * child that has mapped a library file (its descriptor closed, so only
 * /proc/PID/maps names it), a child with a file open, an entry for a pid that
 * has exited (ignored), and the test itself holding a file open (never
 * listed: the daemon does not refuse itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/deploy/gpu-users.h"

static char dir[64];

static void
write_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('x', f);
	fclose(f);
}

/* Waits to be killed; MODE 'm' maps PATH first (and closes the descriptor),
 * 'o' keeps it open. Writes its pid to FD when ready. */
static void
holder_main(int mode, const char *path, int fd)
{
	int f = path != NULL ? open(path, O_RDONLY) : -1;
	pid_t me = getpid();

	if (mode == 'm') {
		void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, f, 0);
		close(f);
		if (m == MAP_FAILED)
			_exit(1);
	}
	if (write(fd, &me, sizeof(me)) != (ssize_t)sizeof(me))
		_exit(1);
	for (;;)
		pause();
}

/* A process of someone else's: forked twice, so that it is not this
 * process's descendant (rocmd's own children are never counted as users). */
static pid_t
child(int mode, const char *path)
{
	int p[2];
	pid_t mid, pid = 0;

	assert_int_equal(pipe(p), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		if (fork() == 0)
			holder_main(mode, path, p[1]);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
	close(p[0]);
	waitpid(mid, NULL, 0);
	return pid;
}

/* A child of this process holding PATH mapped, as the tuner's fork()ed
 * evaluator holds whatever the daemon had mapped. */
static pid_t
own_child(const char *path)
{
	int p[2];
	pid_t pid, got = 0;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		holder_main('m', path, p[1]);
	close(p[1]);
	assert_int_equal(read(p[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	close(p[0]);
	return pid;
}

static void
reap(pid_t pid)
{
	char path[64], buf[256], *p;

	kill(pid, SIGKILL);
	if (waitpid(pid, NULL, 0) == pid)
		return;
	/* A grandchild: init reaps it, some time; wait until it is a zombie or gone. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n;

		if (f == NULL)
			return;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p != NULL && (p[2] == 'Z' || p[2] == 'X'))
			return;
		usleep(10000);
	}
}

static const struct rocmd_gpu_user *
find(const struct rocmd_gpu_users *u, long pid)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].pid == pid)
			return &u->v[i];
	return NULL;
}

static void
test_holders_and_users(void **state)
{
	char kfd[256], entry[300], lib[256], co[300], dat[300], other[256], text[2048];
	struct rocmd_gpu_users u;
	pid_t gpu, mapper, opener, dead;
	const char *paths[1];
	int self_fd;

	snprintf(kfd, sizeof(kfd), "%s/root/sys/class/kfd/kfd/proc", dir);
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	snprintf(co, sizeof(co), "%s/Kernels.so-000-gfx1103.hsaco", lib);
	snprintf(dat, sizeof(dat), "%s/TensileLibrary.dat", lib);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	assert_int_equal(mkdir(lib, 0755), 0);
	snprintf(entry, sizeof(entry), "mkdir -p '%s'", kfd);
	assert_int_equal(system(entry), 0);
	write_file(co, 8192);
	write_file(dat, 100);
	write_file(other, 100);

	gpu = child(0, NULL);
	mapper = child('m', co);
	opener = child('o', dat);
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	/* A process using a file outside the target is nobody's concern. */
	pid_t outsider = child('o', other);
	pid_t own = own_child(co);
	self_fd = open(dat, O_RDONLY);
	assert_true(self_fd >= 0);
	snprintf(entry, sizeof(entry), "%s/%ld", kfd, (long)gpu);
	assert_int_equal(mkdir(entry, 0755), 0);
	snprintf(entry, sizeof(entry), "%s/%ld", kfd, (long)dead);
	assert_int_equal(mkdir(entry, 0755), 0);
	snprintf(entry, sizeof(entry), "%s/%ld", kfd, (long)getpid());
	assert_int_equal(mkdir(entry, 0755), 0);

	paths[0] = lib;
	snprintf(entry, sizeof(entry), "%s/root", dir);
	assert_int_equal(rocmd_gpu_users_find(entry, paths, 1, &u), 0);
	assert_non_null(find(&u, gpu));
	assert_string_equal(find(&u, gpu)->what, "holds the GPU");
	assert_non_null(find(&u, mapper));
	assert_string_equal(find(&u, mapper)->what, "maps Kernels.so-000-gfx1103.hsaco");
	assert_non_null(find(&u, opener));
	assert_string_equal(find(&u, opener)->what, "has TensileLibrary.dat open");
	assert_null(find(&u, dead));
	assert_null(find(&u, outsider));
	assert_null(find(&u, getpid()));
	assert_null(find(&u, own));
	assert_int_equal(u.n, 3);
	rocmd_gpu_users_describe(&u, text, sizeof(text));
	snprintf(entry, sizeof(entry), "%ld (", (long)mapper);
	assert_non_null(strstr(text, entry));
	assert_non_null(strstr(text, ": maps Kernels.so-000-gfx1103.hsaco)"));
	rocmd_gpu_users_free(&u);

	/* Without paths only the GPU holders count. */
	snprintf(entry, sizeof(entry), "%s/root", dir);
	assert_int_equal(rocmd_gpu_users_find(entry, NULL, 0, &u), 0);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.v[0].pid, gpu);
	rocmd_gpu_users_free(&u);

	close(self_fd);
	reap(gpu);
	reap(mapper);
	reap(opener);
	reap(outsider);
	reap(own);
	/* Once they are gone, nobody holds anything (their KFD entries stay). */
	assert_int_equal(rocmd_gpu_users_find(entry, paths, 1, &u), 0);
	assert_int_equal(u.n, 0);
	rocmd_gpu_users_free(&u);
}

static int
setup(void **state)
{
	strcpy(dir, "/tmp/rocmd-test-gpu-users-XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_holders_and_users, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
