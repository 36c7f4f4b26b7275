/*
 * The HIP backend's compile in a child process (backend-hip.h): hiprtc is
 * loaded and run only in a child, because Debian's HIP 5.2 hiprtc aborts its
 * whole process (not an error code) for gfx11 targets. The child compiles
 * and writes "<status u32><log len u64><log><code len u64><code>"; the parent
 * reads it with a deadline and turns a crash or a bad exit into ROCMD_EINVAL
 * with the log.
 *
 * POSIX: a fork()ed child (rocmd_child_fork) that has the job in memory.
 * Windows has no fork: the child is this program started again through
 * common/spawn.h (CreateProcessW in a kill-on-close job object) with the
 * hidden argument --rocmd-hiprtc, which main() hands over through
 * tune_evaluator_child() to backend_hip_rtc_main(); the job is the first
 * message, "<u64 len><bytes>" for the hiprtc path, the arch, the source and
 * each define. Both run compile_child().
 */
#include "kernels/backend-hip.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "common/spawn.h"
#include "kernels/space.h"

typedef int hiprtcResult;
typedef struct _hiprtcProgram *hiprtcProgram;
typedef hiprtcResult (*rtc_create_fn)(hiprtcProgram *, const char *, const char *, int,
                                      const char **, const char **);
typedef hiprtcResult (*rtc_compile_fn)(hiprtcProgram, int, const char **);
typedef hiprtcResult (*rtc_size_fn)(hiprtcProgram, size_t *);
typedef hiprtcResult (*rtc_get_fn)(hiprtcProgram, char *);

#define RTC_ARG "--rocmd-hiprtc"

/* What the compiling child compiles. */
struct compile_job {
	const char *rtc_path, *arch, *src;
	const char *const *defines;
	int ndefines;
};

/* The child's side: compile and write the answer to the parent. Returns
 * the exit code. */
static int
compile_child(void *arg, const struct rocmd_child_chan *ch)
{
	const struct compile_job *job = arg;
	char why[512];
	void *rtc = rocmd_dl_open(job->rtc_path, why, sizeof(why));
	const char *opts[SPACE_MAX_PARAMS + 8];
	char dstore[SPACE_MAX_PARAMS][64], archopt[64];
	const char *hdr_src[1] = {""}, *hdr_name[1] = {"port.h"};
	hiprtcProgram prog = NULL;
	char *log = NULL, *code = NULL;
	size_t loglen = 0, codelen = 0;
	uint32_t status = 1;
	int i, nopt = 0;
	rtc_create_fn create;
	rtc_compile_fn compile;
	rtc_size_fn logsize, codesize;
	rtc_get_fn getlog, getcode;

	if (getenv("ROCMD_TEST_HIPRTC_ABORT") != NULL)
		abort(); /* what Debian's HIP 5.2 hiprtc does for gfx11 */
	if (rtc == NULL) {
		/* The loader's reason is the log. */
		log = why;
		loglen = strlen(why) + 1;
		goto send;
	}
	*(void **)&create = rocmd_dl_sym(rtc, "hiprtcCreateProgram");
	*(void **)&compile = rocmd_dl_sym(rtc, "hiprtcCompileProgram");
	*(void **)&logsize = rocmd_dl_sym(rtc, "hiprtcGetProgramLogSize");
	*(void **)&getlog = rocmd_dl_sym(rtc, "hiprtcGetProgramLog");
	*(void **)&codesize = rocmd_dl_sym(rtc, "hiprtcGetCodeSize");
	*(void **)&getcode = rocmd_dl_sym(rtc, "hiprtcGetCode");
	if (!create || !compile || !logsize || !getlog || !codesize || !getcode)
		goto send;
	/* The source already holds port.h; an empty header satisfies the #include. */
	if (create(&prog, job->src, "gemm.cu", 1, hdr_src, hdr_name) != 0)
		goto send;
	snprintf(archopt, sizeof(archopt), "--offload-arch=%s", job->arch);
	opts[nopt++] = archopt;
	opts[nopt++] = "-O3";
	opts[nopt++] = "-std=c++17";
	for (i = 0; i < job->ndefines && i < SPACE_MAX_PARAMS; i++) {
		snprintf(dstore[i], sizeof(dstore[i]), "-DRK_%s", job->defines[i]);
		opts[nopt++] = dstore[i];
	}
	status = compile(prog, nopt, opts) == 0 ? 0 : 2;
	if (logsize(prog, &loglen) == 0 && loglen > 0 && (log = malloc(loglen)) != NULL)
		getlog(prog, log);
	else
		loglen = 0;
	if (status == 0 && codesize(prog, &codelen) == 0 && codelen > 0 &&
	    (code = malloc(codelen)) != NULL)
		getcode(prog, code);
	else
		codelen = 0;
send : {
	uint64_t l = loglen, c = codelen;

	if (rocmd_child_chan_write(ch, &status, 4) < 0 || rocmd_child_chan_write(ch, &l, 8) < 0 ||
	    (l && rocmd_child_chan_write(ch, log, l) < 0) ||
	    rocmd_child_chan_write(ch, &c, 8) < 0 || (c && rocmd_child_chan_write(ch, code, c) < 0))
		return 3;
}
	return 0;
}

#ifdef _WIN32
/* Set by backend_hip_rtc_main() in a program whose main() takes RTC_ARG. */
static int exec_ready;
static char *prog_name = (char *)"rocmd";

static int
send_str(struct rocmd_child *c, const char *s)
{
	uint64_t n = strlen(s);
	int r = rocmd_child_write(c, &n, 8);

	return r < 0 || n == 0 ? r : rocmd_child_write(c, s, n);
}

static int
start_child(struct rocmd_child *c, const struct compile_job *job, char *log, size_t loglen)
{
	char *argv[] = {prog_name, (char *)RTC_ARG, NULL}, why[512];
	uint64_t n = (uint64_t)job->ndefines;
	int r;

	if (!exec_ready) {
		snprintf(log, loglen,
		         "cannot start the hiprtc child: this program's main() does not "
		         "call tune_evaluator_child()");
		return ROCMD_EINTERNAL;
	}
	if ((r = rocmd_child_start(c, NULL, argv, why, sizeof(why))) < 0) {
		snprintf(log, loglen, "cannot start the hiprtc child: %s", why);
		return r;
	}
	if ((r = send_str(c, job->rtc_path)) == 0 && (r = send_str(c, job->arch)) == 0 &&
	    (r = send_str(c, job->src)) == 0)
		r = rocmd_child_write(c, &n, 8);
	for (int i = 0; r == 0 && i < job->ndefines; i++)
		r = send_str(c, job->defines[i]);
	/* A child gone already is read (and described) by the caller. */
	return 0;
}

/* A string of the job, newly allocated; NULL at the end of input. */
static char *
read_str(const struct rocmd_child_chan *ch, uint64_t max)
{
	uint64_t n;
	char *s;

	if (rocmd_child_chan_read(ch, &n, 8) < 0 || n > max || (s = malloc(n + 1)) == NULL)
		return NULL;
	if (n > 0 && rocmd_child_chan_read(ch, s, n) < 0) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

int
backend_hip_rtc_main(int argc, char **argv)
{
	struct rocmd_child_chan ch;
	struct compile_job job = {0};
	char *path, *arch, *src, *defs[SPACE_MAX_PARAMS] = {0};
	uint64_t n = 0;
	int rc = 4;

	if (argc < 2 || strcmp(argv[1], RTC_ARG) != 0) {
		exec_ready = 1;
		if (argc >= 1 && argv[0] != NULL)
			prog_name = argv[0];
		return -1;
	}
	if (rocmd_child_attach(argc - 2, argv + 2, &ch) < 0)
		return 4;
	path = read_str(&ch, 4096);
	arch = read_str(&ch, 64);
	src = read_str(&ch, 1u << 24);
	if (path != NULL && arch != NULL && src != NULL && rocmd_child_chan_read(&ch, &n, 8) == 0 &&
	    n <= SPACE_MAX_PARAMS) {
		int ok = 1;

		for (uint64_t i = 0; ok && i < n; i++)
			ok = (defs[i] = read_str(&ch, 60)) != NULL;
		job = (struct compile_job){path, arch, src, (const char *const *)defs, (int)n};
		if (ok)
			rc = compile_child(&job, &ch);
	}
	for (int i = 0; i < SPACE_MAX_PARAMS; i++)
		free(defs[i]);
	free(path);
	free(arch);
	free(src);
	return rc;
}
#else
static int
start_child(struct rocmd_child *c, const struct compile_job *job, char *log, size_t loglen)
{
	(void)log;
	(void)loglen;
	return rocmd_child_fork(c, compile_child, (void *)job);
}

int
backend_hip_rtc_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return -1;
}
#endif

int
backend_hip_compile_child(const char *rtc_path, const char *arch, const char *src,
                          const char *const *defines, int ndefines, int timeout_s, char **code,
                          size_t *codelen, char *log, size_t loglen)
{
	struct compile_job job = {rtc_path, arch, src, defines, ndefines};
	struct rocmd_child *child = NULL;
	uint32_t status = 0;
	uint64_t l = 0, c = 0;
	double deadline;
	char *lb = NULL, died[64];
	int st, r;

	*code = NULL;
	*codelen = 0;
	if (log != NULL && loglen > 0)
		log[0] = '\0';
	if ((r = rocmd_child_new(&child)) < 0)
		return r;
	if ((r = start_child(child, &job, log, loglen)) < 0) {
		rocmd_child_free(child);
		return r;
	}
	deadline = rocmd_child_now_ms() + timeout_s * 1000.0;
	r = rocmd_child_read(child, &status, 4, deadline, NULL);
	if (r == 0)
		r = rocmd_child_read(child, &l, 8, deadline, NULL);
	if (r == 0 && l > 0 && l < (1u << 24) && (lb = malloc(l + 1)) != NULL) {
		r = rocmd_child_read(child, lb, l, deadline, NULL);
		lb[r == 0 ? l : 0] = '\0';
	}
	if (r == 0)
		r = rocmd_child_read(child, &c, 8, deadline, NULL);
	if (r == 0 && c > 0 && c < (1u << 30)) {
		*code = malloc(c);
		r = *code != NULL ? rocmd_child_read(child, *code, c, deadline, NULL)
		                  : ROCMD_ENOMEM;
	}
	st = rocmd_child_stop(child, r == ROCMD_ETIMEDOUT);
	rocmd_child_free(child);
	if (rocmd_child_crashed(st, died, sizeof(died))) {
		snprintf(log, loglen, "hiprtc child for %s died of %s (hiprtc aborted?)%s%s", arch,
		         died, lb ? ": " : "", lb ? lb : "");
		r = ROCMD_EINVAL;
	} else if (r == ROCMD_ETIMEDOUT) {
		snprintf(log, loglen, "hiprtc child for %s timed out after %d s", arch, timeout_s);
	} else if (r == ROCMD_ECLOSED && lb == NULL) {
		rocmd_child_describe(st, died, sizeof(died));
		snprintf(log, loglen, "hiprtc child for %s %s without an answer (hiprtc aborted?)", arch, died);
		r = ROCMD_EINVAL;
	} else if (r < 0 || status != 0 || c == 0) {
		snprintf(log, loglen, "hiprtc could not compile for %s (status %u, %s)%s%s", arch,
		         status, status == 1 ? "hiprtc not loadable" : "compile error",
		         lb ? ": " : "", lb ? lb : "");
		r = ROCMD_EINVAL;
	}
	free(lb);
	if (r < 0) {
		free(*code);
		*code = NULL;
		return r;
	}
	*codelen = c;
	return 0;
}
