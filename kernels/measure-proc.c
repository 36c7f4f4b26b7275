/*
 * The evaluation process of the tuner's evaluator (see measure-proc.h): this
 * same program started again through the child-process layer
 * (common/spawn.h: posix_spawn of the file rocmd_self_init kept open,
 * CreateProcessW of the path it found, in a kill-on-close job object) with
 * the hidden argument --rocmd-tune-eval; main() hands such a command line to
 * tune_evaluator_child() before anything else (which also serves the HIP
 * backend's compile child on Windows, --rocmd-hiprtc: backend-hip-rtc.c). Never fork() without exec:
 * a daemon is multi-threaded (a forked copy may find another thread's lock
 * held forever) and a forked copy holds every descriptor of the daemon, its
 * listening socket and state-folder lock included, until it gets round to
 * closing them; a daemon killed in that moment left a socket that answered
 * and then reset the restarted daemon's first client.
 *
 * The child attaches to its pipes (dying with its parent, crashes visible),
 * reads its specification as the first message and serves requests
 * (measure_child_serve). What is left here is the evaluator's part: the
 * hidden argument and the specification; measure.c reads, writes, stops and
 * kills the child through common/spawn.h itself.
 */
#include "kernels/measure-proc.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/spawn.h"
#ifdef ROCMD_BACKEND_HIP
#include "kernels/backend-hip.h"
#endif

#define EVAL_ARG "--rocmd-tune-eval"

/* Set by tune_evaluator_child() in a program that does not run as the
 * evaluation process: its main() takes the hidden argument, so starting it
 * again is safe. */
static int exec_ready;
static char *prog_name = (char *)"rocmd"; /* argv[0] for the child, as ps shows it */

double
measure_mono_ms(void)
{
	return rocmd_child_now_ms();
}

int
measure_proc_start(struct rocmd_child *c, const struct measure_spec *spec, char *why,
		   size_t whylen)
{
	char *argv[] = {prog_name, (char *)EVAL_ARG, NULL}, reason[512];
	int err;

	if (!exec_ready) {
		snprintf(why, whylen, "cannot start the evaluation process: this program's main() "
				      "does not call tune_evaluator_child()");
		return ROCMD_EINTERNAL;
	}
	err = rocmd_child_start(c, NULL, argv, reason, sizeof(reason));
	if (err < 0) {
		snprintf(why, whylen, "cannot start the evaluation process: %s", reason);
		return err;
	}
	/* The specification is the first message. */
	err = rocmd_child_write(c, spec, sizeof(*spec));
	if (err < 0) {
		rocmd_child_stop(c, 1);
		snprintf(why, whylen, "the evaluation process ended before it read its task");
	}
	return err;
}

/* ---- the child ---- */

static int
io_read(void *ctx, void *buf, size_t len)
{
	return rocmd_child_chan_read(ctx, buf, len);
}

static int
io_write(void *ctx, const void *buf, size_t len)
{
	return rocmd_child_chan_write(ctx, buf, len);
}

int
tune_evaluator_child(int argc, char **argv)
{
	struct rocmd_child_chan ch;
	struct measure_io io = {io_read, io_write, &ch};
	int err;

#ifdef ROCMD_BACKEND_HIP
	/* The HIP backend's compile child on Windows (backend-hip-rtc.c). */
	if ((err = backend_hip_rtc_main(argc, argv)) >= 0)
		return err;
#endif
	if (argc < 2 || strcmp(argv[1], EVAL_ARG) != 0) {
		exec_ready = 1;
		if (argc >= 1 && argv[0] != NULL)
			prog_name = argv[0];
		return -1;
	}
	err = rocmd_child_attach(argc - 2, argv + 2, &ch);
	if (err < 0)
		return err == ROCMD_ECLOSED ? 1 : 2;
	return measure_child_serve(&io);
}
