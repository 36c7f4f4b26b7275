/*
 * doctor's check of what the feeds' catalogues say (doctor.h, docs/FEEDS.md):
 * a package deployed at a target that a cached feed lists (by name, or by
 * the URL it was fetched from) and marks bad, or whose bad_drivers ranges
 * hold the running amdgpu driver; the automatic fetch never chooses such a
 * package, but one imported or deployed by hand (or before the catalogue
 * said so) stays until doctor names it. Where a range is given and the
 * driver's version is unknown, an info finding says how to see it. It reads
 * the cached metadata as pkg.available does (signatures checked again),
 * on the worker.
 */
#include "doctor.h"

#include <stdio.h>
#include <string.h>

#include "daemon/core/server.h"
#include "daemon/pkg/feed.h"
#include "daemon/pkg/pkg-service.h"

static int
listed_as(const struct rocmd_feed_pkg *p, const char *name, const char *source)
{
	return strcmp(p->name, name) == 0 || (source[0] && strcmp(p->url, source) == 0);
}

/* Whether the feeds mark package NAME bad (for any reason doctor names). */
static int
marked_bad(const struct rocmd_feed_list *l, const char *name, const char *driver)
{
	char sub[16];

	for (size_t i = 0; i < l->n; i++)
		if (listed_as(&l->p[i], name, "") &&
		    (l->p[i].bad != NULL ||
		     rocmd_feed_driver_bad(l->p[i].bad_drivers, driver, sub, sizeof(sub))))
			return 1;
	return 0;
}

static void
evidence(cJSON *ev, const struct doctor_target *dt, const struct rocmd_feed_pkg *p)
{
	cJSON *o = cJSON_AddObjectToObject(ev, "package");

	cJSON_AddNumberToObject(o, "id", (double)dt->row.live_pkg);
	cJSON_AddStringToObject(o, "name", dt->pkg_name);
	cJSON_AddStringToObject(ev, "remote", p->remote);
}

/* One target: the first listing that marks its package bad, else the
 * driver-unknown note. */
static void
check_target(struct doctor *d, const struct rocmd_feed_list *l, struct doctor_target *dt)
{
	const struct rocmd_feed_pkg *ranged = NULL;
	char sub[512], fix[1536], other[512];
	int fix_kind;
	cJSON *ev;

	if (!dt->row.found || dt->row.live_id == 0 || dt->row.live_pkg <= 0 || !dt->pkg_name[0])
		return;
	/* The matching package is the fix only when the feeds do not mark it bad too. */
	fix_kind = doctor_matching_fix(dt, 0);
	if (fix_kind != DOCTOR_FIX_NONE && marked_bad(l, dt->match_name, d->driver))
		fix_kind = DOCTOR_FIX_NONE;
	deploy_fmt(other, sizeof(other),
	           "roll back to the vendor's library (rocmctl lib rollback "
	           "--to original) or deploy another package (rocmctl pkg available --sdk %s "
	           "--arch %s lists what the feeds offer, and why each is chosen or not)",
	           dt->t.sdk_version[0] ? dt->t.sdk_version : "X.Y",
	           d->ngpus > 0 ? d->gpus[0].arch : "GFX");
	if (fix_kind != DOCTOR_FIX_NONE)
		doctor_matching_text(dt, 0, fix, sizeof(fix), other);
	else
		deploy_copy(fix, sizeof(fix), other);
	for (size_t i = 0; i < l->n; i++) {
		const struct rocmd_feed_pkg *p = &l->p[i];
		if (!listed_as(p, dt->pkg_name, dt->pkg_source))
			continue;
		if (p->bad != NULL) {
			ev = doctor_add(
			    d, "known-bad", DOCTOR_ERROR, dt, fix_kind, fix,
			    "package #%lld (%s), deployed at %s, is marked bad by remote %s: "
			    "%s",
			    (long long)dt->row.live_pkg, dt->pkg_name, dt->t.name, p->remote,
			    p->bad);
			evidence(ev, dt, p);
			cJSON_AddStringToObject(ev, "bad", p->bad);
			return;
		}
		if (rocmd_feed_driver_bad(p->bad_drivers, d->driver, sub, sizeof(sub))) {
			ev = doctor_add(
			    d, "known-bad", DOCTOR_ERROR, dt, fix_kind, fix,
			    "package #%lld (%s), deployed at %s, is marked bad for this "
			    "driver by remote %s: %s",
			    (long long)dt->row.live_pkg, dt->pkg_name, dt->t.name, p->remote, sub);
			evidence(ev, dt, p);
			cJSON_AddStringToObject(ev, "amdgpu_driver", d->driver);
			cJSON_AddItemToObject(ev, "bad_drivers",
			                      cJSON_Duplicate(p->bad_drivers, 1));
			return;
		}
		if (ranged == NULL && cJSON_GetArraySize(p->bad_drivers) > 0)
			ranged = p;
	}
	if (ranged == NULL || d->driver[0])
		return;
	ev = doctor_add(d, "known-bad", DOCTOR_INFO, dt, DOCTOR_FIX_NONE,
	                "compare the driver's version (rocmctl gpu list shows amdgpu_version once "
	                "AMD's amdgpu-dkms is installed) with the ranges below",
	                "remote %s lists amdgpu driver versions package #%lld (%s), deployed at "
	                "%s, breaks on, but this driver's version is unknown, so rocmd cannot "
	                "tell whether it is one of them",
	                ranged->remote, (long long)dt->row.live_pkg, dt->pkg_name, dt->t.name);
	evidence(ev, dt, ranged);
	cJSON_AddStringToObject(ev, "amdgpu_driver", doctor_driver_text(d));
	cJSON_AddItemToObject(ev, "bad_drivers", cJSON_Duplicate(ranged->bad_drivers, 1));
}

void
doctor_check_known_bad(struct doctor *d)
{
	struct rocmd_feed_list l;
	char why[1024];

	memset(&l, 0, sizeof(l));
	if (d->ds->srv->pkg == NULL || d->ntg == 0)
		return;
	/* Remote files that do not load: pkg refresh and pkg available say why. */
	if (rocmd_feed_cached(d->ds->srv, &l, why, sizeof(why)) == 0)
		for (size_t i = 0; i < d->ntg; i++)
			check_target(d, &l, &d->tg[i]);
	rocmd_feed_list_free(&l);
}
