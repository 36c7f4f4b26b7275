/*
 * Auto-sync: keeps each SDK's rocBLAS deployed after the SDK changes under
 * it. SDK discovery calls on_change (its one hook, rocmd_sdk_on_change) once
 * a scan is committed; the policy is config key deploy.sync:
 *
 *   off     nothing;
 *   report  an event says what would be done ("lib.sync", "lib.drift");
 *   deploy  the deploy is queued too (deploy-methods.c's job queue), and its
 *           outcome is an event of its own ("lib.deployed", ...).
 *
 * An SDK added or upgraded gets the package rocmd_pkg_match picks for its
 * version and this machine's GPUs; when none is stored and pkg.auto_fetch
 * is 1, the one the cached feeds offer is fetched and then deployed
 * (feed-service.c, rocmd_feed_auto_fetch). An SDK whose library changed other than by
 * rocmd is checked for drift: when rocmd had deployed there and discovery's
 * fingerprint of the library is no longer the deployed one, an update
 * overwrote it, and the package is deployed again (re-matched when the
 * version changed too). hipBLASLt's folder is checked the same way when
 * rocmd deployed hipBLASLt files there ("sdk.hipblaslt_changed"): its
 * fingerprint against that of the files current.json names; the live
 * package is deployed again; a hipBLASLt folder that appeared where the live
 * package's hipBLASLt had nowhere to go (an SDK update that adds hipBLASLt)
 * gets it, the live package deployed again. Every decision, including "nothing to do because",
 * is an event, so a user can see why a library did or did not come back.
 */
#include "deploy-sync.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "deploy-service.h"
#include "daemon/sdk/sdk.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg-service.h"

/* The automatic fetch ended: deploy what came (the deploy job checks and
 * verifies it as any deploy does). */
static void
sync_fetched(struct rocmd_server *srv, int64_t pkg_id, const char *why, void *ctx)
{
	int64_t sdk_id = (int64_t)(intptr_t)ctx;
	char dwhy[1024];

	(void)why; /* the fetch's own event said it */
	if (pkg_id == 0)
		return;
	if (rocmd_deploy_svc_queue_sdk(srv->deploy, sdk_id, pkg_id, "sync", dwhy, sizeof(dwhy)) < 0)
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "SDK #%lld: fetched package #%lld, but cannot deploy it: %s",
		           (long long)sdk_id, (long long)pkg_id, dwhy);
	else
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "SDK #%lld: deploying fetched package #%lld (deploy.sync is deploy, "
		           "pkg.auto_fetch is 1)",
		           (long long)sdk_id, (long long)pkg_id);
}

/* No stored package fits: the feeds may have one (pkg.auto_fetch). */
static void
sync_fetch(struct rocmd_server *srv, int64_t sdk_id, const struct rocmd_deploy_sdk_view *v)
{
	char version[32], platform[32], arch[32], why[1024];

	if (srv->pkg == NULL)
		return;
	if (rocmd_deploy_svc_sdk_wants(srv->deploy, sdk_id, version, platform, arch, why,
	                               sizeof(why)) < 0 ||
	    rocmd_feed_auto_fetch(srv, sdk_id, version, platform, arch, sync_fetched,
	                          (void *)(intptr_t)sdk_id, why, sizeof(why)) < 0)
		deploy_say(srv, ROCMD_LOG_NOTICE, "pkg.auto_fetch", NULL,
		           "HIP SDK %s %s: nothing to fetch: %s", v->sdk_version, v->sdk_path, why);
}

static void
sync_new(struct rocmd_server *srv, int64_t sdk_id, int deploy)
{
	struct rocmd_deploy_sdk_view v;
	char name[256] = "", why[1024] = "";
	int64_t pkg = 0;

	if (rocmd_deploy_svc_sdk_view(srv->deploy, sdk_id, &v) < 0 || v.queued)
		return;
	if (rocmd_deploy_svc_match_sdk(srv->deploy, sdk_id, &pkg, name, sizeof(name), why, sizeof(why)) < 0) {
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "HIP SDK %s %s: nothing to deploy: %s",
		           v.sdk_version[0] ? v.sdk_version : "(version unknown)", v.sdk_path, why);
		if (deploy && srv->cfg->pkg_auto_fetch)
			sync_fetch(srv, sdk_id, &v);
		return;
	}
	if (v.live_package_id == pkg &&
	    (v.overlay ||
	     (v.live_fingerprint[0] != '\0' && strcmp(v.live_fingerprint, v.sdk_fingerprint) == 0)))
		return; /* already in place */
	if (!deploy) {
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "HIP SDK %s %s: package #%lld (%s) matches; run rocmctl lib deploy "
		           "--target sdk-%lld (deploy.sync is report)",
		           v.sdk_version, v.sdk_path, (long long)pkg, name, (long long)sdk_id);
		return;
	}
	if (rocmd_deploy_svc_queue_sdk(srv->deploy, sdk_id, pkg, "sync", why, sizeof(why)) < 0)
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "HIP SDK %s: cannot deploy package #%lld: %s", v.sdk_path,
		           (long long)pkg, why);
	else
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "HIP SDK %s %s: deploying package #%lld (%s) (deploy.sync is deploy)",
		           v.sdk_version, v.sdk_path, (long long)pkg, name);
}

static void
sync_drift(struct rocmd_server *srv, int64_t sdk_id, int deploy)
{
	struct rocmd_deploy_sdk_view v;
	char name[256] = "", why[1024] = "";
	int64_t pkg;

	if (rocmd_deploy_svc_sdk_view(srv->deploy, sdk_id, &v) < 0 || v.queued ||
	    v.live_package_id == 0 || v.overlay)
		return; /* nothing of rocmd's there (its overlay is elsewhere): the SDK's own update
		         */
	if (v.live_fingerprint[0] == '\0' || v.sdk_fingerprint[0] == '\0' ||
	    strcmp(v.live_fingerprint, v.sdk_fingerprint) == 0)
		return;
	/* The version may have moved too: deploy what matches now. */
	pkg = v.live_package_id;
	if (rocmd_deploy_svc_match_sdk(srv->deploy, sdk_id, &pkg, name, sizeof(name), why, sizeof(why)) < 0)
		pkg = v.live_package_id;
	if (!deploy) {
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the rocBLAS library of %s no longer holds package #%lld rocmd "
		           "deployed (an SDK update overwrote it); run rocmctl lib deploy "
		           "--target sdk-%lld (deploy.sync is report)",
		           v.sdk_path, (long long)v.live_package_id, (long long)sdk_id);
		return;
	}
	if (rocmd_deploy_svc_queue_sdk(srv->deploy, sdk_id, pkg, "drift", why, sizeof(why)) < 0)
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the rocBLAS library of %s was overwritten; cannot redeploy package "
		           "#%lld: %s",
		           v.sdk_path, (long long)pkg, why);
	else
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the rocBLAS library of %s was overwritten (an SDK update); "
		           "redeploying package #%lld",
		           v.sdk_path, (long long)pkg);
}

/* hipBLASLt's folder appeared under a deploy of rocmd's whose package
 * carries one, deployed when the SDK had none (or before discovery had seen
 * it): the package's hipBLASLt is deployed there now. */
static void
sync_lt_new(struct rocmd_server *srv, int64_t sdk_id, const struct rocmd_deploy_sdk_view *v,
            int deploy)
{
	char what[1024], why[1024];
	long long pkg = (long long)v->live_package_id;

	if (deploy && rocmd_deploy_svc_queue_sdk(srv->deploy, sdk_id, v->live_package_id, "sync",
	                                         why, sizeof(why)) < 0) {
		deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
		           "HIP SDK %s now has a hipBLASLt library (%s); cannot deploy package "
		           "#%lld's to it: %s",
		           v->sdk_path, v->lt_path, pkg, why);
		return;
	}
	if (deploy)
		snprintf(what, sizeof(what),
		         "deploying package #%lld again (deploy.sync is deploy)", pkg);
	else
		snprintf(what, sizeof(what),
		         "run rocmctl lib deploy --target sdk-%lld --package %lld (deploy.sync is "
		         "report)",
		         (long long)sdk_id, pkg);
	deploy_say(srv, ROCMD_LOG_NOTICE, "lib.sync", NULL,
	           "HIP SDK %s now has a hipBLASLt library (%s) and package #%lld, deployed there, "
	           "carries one rocmd has not deployed; %s",
	           v->sdk_path, v->lt_path, pkg, what);
}

/* hipBLASLt's folder changed other than by rocmd: drift when it held
 * hipBLASLt files rocmd deployed and no longer does (an application or pip
 * update overwrote them); the live package is deployed again. A folder that
 * appeared where the live package's hipBLASLt had nowhere to go gets it
 * (sync_lt_new). */
static void
sync_lt_drift(struct rocmd_server *srv, int64_t sdk_id, int deploy)
{
	struct rocmd_deploy_sdk_view v;
	char why[1024];

	if (rocmd_deploy_svc_sdk_view(srv->deploy, sdk_id, &v) < 0 || v.queued ||
	    v.live_package_id == 0 || v.overlay)
		return; /* none of rocmd's there (its overlay is elsewhere) */
	if (v.live_lt_fingerprint[0] == '\0') {
		if (v.live_pkg_has_lt && v.lt_fingerprint[0] != '\0')
			sync_lt_new(srv, sdk_id, &v, deploy);
		return;
	}
	if (strcmp(v.live_lt_fingerprint, v.lt_fingerprint) == 0)
		return; /* still what it deployed */
	if (!deploy || v.lt_fingerprint[0] == '\0') {
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the hipBLASLt library of %s no longer holds what package #%lld rocmd "
		           "deployed there (%s); run rocmctl lib deploy --target sdk-%lld "
		           "--package %lld%s",
		           v.sdk_path, (long long)v.live_package_id,
		           v.lt_fingerprint[0] ? "an update overwrote it" : "its folder is gone",
		           (long long)sdk_id, (long long)v.live_package_id,
		           deploy ? "" : " (deploy.sync is report)");
		return;
	}
	if (rocmd_deploy_svc_queue_sdk(srv->deploy, sdk_id, v.live_package_id, "drift", why,
	                               sizeof(why)) < 0)
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the hipBLASLt library of %s was overwritten; cannot redeploy package "
		           "#%lld: %s",
		           v.sdk_path, (long long)v.live_package_id, why);
	else
		deploy_say(srv, ROCMD_LOG_WARNING, "lib.drift", NULL,
		           "the hipBLASLt library of %s (%s) was overwritten (an update); "
		           "redeploying package #%lld",
		           v.sdk_path, v.lt_path, (long long)v.live_package_id);
}

static void
on_change(struct rocmd_server *srv, int64_t sdk_id, const char *kind, void *ctx)
{
	const char *policy = srv->cfg->deploy_sync;
	int deploy = strcmp(policy, "deploy") == 0;

	if (strcmp(policy, "off") == 0)
		return;
	/* A new SDK is acted on once its library and the GPUs are known (the
	 * deep pass), not at the quick pass's "sdk.added". */
	if (strcmp(kind, "sdk.library_changed") == 0)
		sync_drift(srv, sdk_id, deploy);
	else if (strcmp(kind, "sdk.hipblaslt_changed") == 0)
		sync_lt_drift(srv, sdk_id, deploy);
	else if (strcmp(kind, "sdk.library_inspected") == 0 ||
	         strcmp(kind, "sdk.version_changed") == 0)
		sync_new(srv, sdk_id, deploy);
}

void
rocmd_deploy_sync_start(struct rocmd_server *srv)
{
	if (srv->sdk != NULL)
		rocmd_sdk_on_change(srv->sdk, on_change, NULL);
}
