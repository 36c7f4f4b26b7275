/*
 * SDK discovery in the daemon: scans (sdk-discover.c, rocblas-library.c, gpu-*.c)
 * run off the loop thread; the results are written to the database by the
 * loop thread, and every change (SDK added, removed, unreadable, version
 * changed, library changed; GPU added or removed) becomes an event row and a
 * notification through rocmd_server_event().
 *
 * Watching (sdk-watch.c): uv_fs_event handles on every SDK root and the
 * folders inside it that matter, and on the parent folders where new SDKs
 * appear (/opt, /usr/share/hip, /usr/lib/<triplet>, C:\Program Files\AMD\ROCm).
 * inotify is not recursive, so an event only says "something happened near
 * here"; the changed path is remembered and, once no event has come for the
 * debounce window, a worker checks that nothing under those paths changed
 * within the window either (newest ctime: cp -a cannot fake it), and waits
 * longer if something did. An installer writing thousands of files therefore
 * causes one scan, about one window after its last write. A rescan on a
 * timer runs only when sdk.rescan_interval_s is set; an idle daemon has no
 * periodic wake-ups.
 *
 * Writes rocmd makes itself (deploying a library into an SDK) are announced
 * with rocmd_sdk_suppress_begin/end: events under that path are ignored, and
 * the library change the next scan sees there is recorded without an
 * "sdk.library_changed" event (the deploy records its own).
 */
#ifndef ROCMD_SDK_H
#define ROCMD_SDK_H

#include <stdint.h>

#include <cjson/cJSON.h>

struct rocmd_server;
struct rocmd_pending;
struct rocmd_sdk;

struct rocmd_sdk_start_opts {
	const char *root;  /* --root: the sysroot; NULL for the machine itself */
	int windows;       /* apply the Windows layout rules (tests on Linux) */
	const char *probe; /* rocmd-hip-probe executable; NULL: next to rocmd */
};

/* Opens the SDK tables, starts the first scan and the watches. */
int rocmd_sdk_start(struct rocmd_server *srv, const struct rocmd_sdk_start_opts *o,
                    struct rocmd_sdk **out, char *why, size_t whylen);
/* Closes every handle (called when the daemon shuts down); NULL is fine. */
void rocmd_sdk_stop(struct rocmd_sdk *m);
struct rocmd_engine_ops;
/* The server's view of SDK discovery (daemon/core/server.h). */
extern const struct rocmd_engine_ops rocmd_sdk_engine;
/* Frees M after the loop has ended. NULL is fine. */
void rocmd_sdk_free(struct rocmd_sdk *m);

/* Asks for a scan now. P (may be NULL) is finished with the scan's summary
 * once a scan that started after this call has been applied. */
int rocmd_sdk_rescan(struct rocmd_sdk *m, const char *why, struct rocmd_pending *p);

/* Announces that rocmd itself is about to write under system path SYS_PATH
 * (FLAT: only in that folder itself, as for a binary replaced beside other
 * libraries' folders, whose changes are still seen). Returns a token (> 0)
 * for rocmd_sdk_suppress_end, or a negative error. */
int rocmd_sdk_suppress_begin(struct rocmd_sdk *m, const char *sys_path, int flat);
/* Ends a suppression; events still arriving within 2 s are ignored too, and
 * a scan is scheduled to record the new state quietly. */
void rocmd_sdk_suppress_end(struct rocmd_sdk *m, int token);

/* Deploy's auto-sync hook: FN runs on the loop thread once a scan's changes
 * are committed, for each install added ("sdk.added", from the quick pass;
 * "sdk.library_inspected" once its library and the GPUs are known), upgraded
 * ("sdk.version_changed") or whose library changed other than by rocmd
 * ("sdk.library_changed"; hipBLASLt's: "sdk.hipblaslt_changed"). One hook;
 * NULL removes it. */
typedef void (*rocmd_sdk_change_fn)(struct rocmd_server *srv, int64_t sdk_id, const char *kind,
                                    void *ctx);
void rocmd_sdk_on_change(struct rocmd_sdk *m, rocmd_sdk_change_fn fn, void *ctx);

/* For the method handlers (sdk-methods.c). */
struct rocmd_sdk_db *rocmd_sdk_db(struct rocmd_sdk *m);
/* The last scan's facts not kept in the database: {"time_ms", "scans",
 * "problems", "hip_status", "gpus": [...], "watches"}. */
cJSON *rocmd_sdk_scan_info(struct rocmd_sdk *m);
/* The present GPUs' archs, as "gfx1103" strings (for coverage reports). */
cJSON *rocmd_sdk_gpus_json(struct rocmd_sdk *m);
/* The amdgpu driver's version the last scan read ("6.10.5"), "" when unknown. */
const char *rocmd_sdk_driver_version(const struct rocmd_sdk *m);
/* The HIP runtime the last scan probed the GPUs with: its host path ("" when
 * none), *FROM_DRIVER set when it is the display driver's, and its
 * hipRuntimeGetVersion (HIP_VERSION: major * 10000000 + minor * 100000 +
 * patch; 0 when it did not answer) as the result. */
int rocmd_sdk_hip_runtime(const struct rocmd_sdk *m, const char **path, int *from_driver);

#endif
