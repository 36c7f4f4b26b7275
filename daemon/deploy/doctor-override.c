/*
 * doctor's check of the tuned overrides programs are pointed at (doctor.h,
 * daemon/tune/tune-override.c): ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH and
 * HIPBLASLT_TUNING_OVERRIDE_FILE as the machine's environment names them
 * (what rocmd wrote: environment.d on Linux, the machine environment on
 * Windows) and as the caller's shell has them. An override's solution
 * indices mean something only to the library they were measured on, so each
 * named file is checked against the library its target holds now: the
 * file's identity line (the library's fingerprint and digest) as the
 * start-up recovery compares it. A file that is missing, one rocmd has
 * withdrawn while the environment still names it, or one measured on another
 * library is named; --fix runs the overrides' recovery for rocmd's own (the
 * caller's shell is the user's to change).
 */
#include "doctor.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/core/server.h"
#include "daemon/sdk/sysroot.h"
#include "daemon/tune/tune-env.h"
#include "kernels/vendor-override.h"

static const struct {
	const char *var, *kind;
} vars[] = {
    {"ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH", "rocblas"},
    {"HIPBLASLT_TUNING_OVERRIDE_FILE", "hipblaslt"},
};

/* Where a variable's value was found. */
struct seen {
	const char *var, *kind, *value;
	int machine;       /* the machine's environment (rocmd's), else the caller's */
	const char *where; /* machine: the file or key */
};

static const struct rocmd_tune_override_view *
view_of(const struct doctor *d, const char *path)
{
	for (size_t i = 0; i < d->nov; i++)
		if (strcmp(d->ov[i].o.path, path) == 0)
			return &d->ov[i];
	return NULL;
}

static cJSON *
add(struct doctor *d, const struct seen *s, int severity, const char *fix_text,
    const struct rocmd_tune_override_view *v, const char *what)
{
	int fix = s->machine ? DOCTOR_FIX_OVERRIDE : DOCTOR_FIX_NONE;
	cJSON *ev;

	ev = doctor_add(d, "tune-override", severity, NULL, fix,
	                fix != DOCTOR_FIX_NONE ? "run rocmd's override recovery (--fix does; a "
	                                         "restart of rocmd does too)"
	                                       : fix_text,
	                "%s=%s, in %s, %s", s->var, s->value,
	                s->machine ? s->where : "this shell's environment", what);
	cJSON_AddStringToObject(ev, s->var, s->value);
	cJSON_AddStringToObject(ev, "named_by", s->machine ? s->where : "this shell");
	if (v != NULL) {
		cJSON_AddStringToObject(ev, "tune_target", v->o.target);
		cJSON_AddStringToObject(ev, "library", v->o.library);
		cJSON_AddStringToObject(ev, "state", v->o.state);
	}
	return ev;
}

/* A file with rocmd's identity line against the library there now: 1 it is
 * that library's, 0 not (NOW: the library's digest, where computed). */
static int
current(const struct doctor *d, const struct rocmd_tune_override_view *v, const char *kind,
        const struct vendor_override_id *id, const struct rocmd_tune_override_view **lib,
        char now[65])
{
	*lib = v;
	now[0] = '\0';
	if (v != NULL)
		return v->found && rocmd_tune_library_same(kind, v->library, v->tensile_dir,
		                                           id->stat, id->digest, now);
	/* A copy of an override elsewhere: any library of that kind it fits. */
	for (size_t i = 0; i < d->nov; i++) {
		if (strcmp(d->ov[i].o.library, kind) != 0 || !d->ov[i].found)
			continue;
		*lib = &d->ov[i];
		if (rocmd_tune_library_same(kind, d->ov[i].library, d->ov[i].tensile_dir, id->stat,
		                            id->digest, now))
			return 1;
	}
	return 0;
}

static void
check_one(struct doctor *d, const struct seen *s)
{
	const struct rocmd_tune_override_view *v = view_of(d, s->value), *lib = NULL;
	const char *root = d->ds->root[0] ? d->ds->root : NULL;
	struct vendor_override_id id;
	char host[PATH_MAX], now[65], what[1024];
	struct stat st;
	cJSON *ev;

	/* rocmd's own files are named by their host path; another is a system path. */
	if (v != NULL || rocmd_sysroot_map(root, s->value, host, sizeof(host)) < 0)
		deploy_copy(host, sizeof(host), s->value);
	if (stat(host, &st) != 0 || !S_ISREG(st.st_mode)) {
		add(d, s, s->machine ? DOCTOR_ERROR : DOCTOR_WARNING,
		    "unset it, or point it at the file rocmd keeps (rocmctl tune results names it)",
		    v,
		    "names no file: the library reads no override, and the tuned solutions do not "
		    "reach programs");
		return;
	}
	if (rocmd_tune_override_read_id(host, &id) < 0) {
		add(d, s, DOCTOR_INFO,
		    "nothing, if it is yours; rocmd's own are named by rocmctl tune "
		    "results",
		    NULL,
		    "is not an override rocmd wrote (it has no identity line), so doctor cannot "
		    "tell which library it was measured on");
		return;
	}
	if (v != NULL && s->machine && strcmp(v->o.state, "live") != 0) {
		deploy_fmt(what, sizeof(what),
		           "names rocmd's override of %s's %s, which is %s (%s): "
		           "programs started now are pointed at a file rocmd no longer keeps there",
		           v->o.target, v->o.library, v->o.state, v->o.detail);
		add(d, s, DOCTOR_WARNING, NULL, v, what);
		return;
	}
	if (v != NULL && v->o.entries == 0)
		return; /* identity alone: nothing a library would read */
	if (current(d, v, s->kind, &id, &lib, now))
		return;
	if (lib == NULL) {
		add(d, s, DOCTOR_WARNING, "unset it: no library here has its own override yet",
		    NULL, "is an override of a library rocmd does not tune here");
		return;
	}
	deploy_fmt(what, sizeof(what),
	           "was measured on %s sha256 %.12s, but %s at %s is %s now: "
	           "its solution indices are those of the old library, which the new one takes "
	           "as they are (another solution, or none, for each shape)",
	           id.library, id.digest, lib->o.library, lib->library,
	           !lib->found ? "gone"
	           : now[0]    ? "another build"
	                       : "unreadable");
	ev = add(d, s, DOCTOR_ERROR,
	         "unset it, or point it at the file rocmd keeps for the library there now "
	         "(rocmctl tune results names it)",
	         s->machine ? v : NULL, what);
	cJSON_AddStringToObject(ev, "measured_on", id.digest);
	if (now[0])
		cJSON_AddStringToObject(ev, "library_now", now);
	cJSON_AddStringToObject(ev, "library_path", lib->library);
}

void
doctor_check_overrides(struct doctor *d)
{
	const char *root = d->ds->root[0] ? d->ds->root : NULL;
	char *caller[] = {d->env.gemm_override, d->env.hipblaslt_override};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char value[2048], where[PATH_MAX];
		struct seen s = {vars[i].var, vars[i].kind, value, 1, where};
		if (rocmd_tune_env_read(root, vars[i].var, value, sizeof(value), where,
		                        sizeof(where)) == 1)
			check_one(d, &s);
		/* The caller's own value, when it is not the machine's already judged. */
		if (caller[i] != NULL &&
		    !(rocmd_tune_env_read(root, vars[i].var, value, sizeof(value), where,
		                          sizeof(where)) == 1 &&
		      strcmp(value, caller[i]) == 0)) {
			struct seen c = {vars[i].var, vars[i].kind, caller[i], 0, NULL};
			check_one(d, &c);
		}
	}
}

void
doctor_fix_override(struct doctor *d, cJSON *f)
{
	struct rocmd_tune *t = d->ds->srv->tune;
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(f, "evidence");
	const char *target =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "tune_target"));
	const char *library = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "library"));
	const char *root = d->ds->root[0] ? d->ds->root : NULL;
	struct rocmd_tune_override o;
	char did[1024], value[2048], where[PATH_MAX];
	int named = 0;

	const char *var = NULL;

	if (t == NULL) {
		cJSON_AddStringToObject(f, "fix_failed",
		                        "idle tuning is not running in this rocmd");
		return;
	}
	if (!d->overrides_rechecked) {
		rocmd_tune_override_recheck(t);
		d->overrides_rechecked = 1;
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (cJSON_GetObjectItemCaseSensitive(ev, vars[i].var) != NULL)
			var = vars[i].var;
	if (var != NULL)
		named = rocmd_tune_env_read(root, var, value, sizeof(value), where, sizeof(where));
	if (target == NULL || library == NULL ||
	    rocmd_tune_override_state(t, target, library, &o) < 0)
		deploy_fmt(did, sizeof(did),
		           "ran rocmd's override recovery: the machine's "
		           "environment %s %s now",
		           named ? "names" : "no longer names", var != NULL ? var : "it");
	else
		deploy_fmt(did, sizeof(did),
		           "ran rocmd's override recovery: %s's %s override is %s "
		           "now (%lld entr%s%s%s), and the machine's environment %s",
		           target, library, o.state, (long long)o.entries,
		           o.entries == 1 ? "y" : "ies", o.detail[0] ? ": " : "", o.detail,
		           named ? "names it (programs started from now on read it)"
		                 : "no longer names it");
	cJSON_ReplaceItemInObject(f, "fixed", cJSON_CreateString(did));
}
