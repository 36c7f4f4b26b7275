/*
 * Choosing a package for an SDK and a GPU arch. Hard checks first — the
 * package's SDK generation must be the SDK's (a 6.1 build never goes on a 6.2
 * SDK), its platform must fit, it must carry the arch — then a rule ranks
 * whatever is left. A rule is text:
 *
 *     RANGE[@PLATFORM][/ARCH]=PREF[,PREF...]      rules separated by ';'
 *
 * RANGE is a version prefix ("6.2" covers 6.2.x), a range of prefixes
 * ("6.1-6.3") or "*"; PREF is a package version hint ("V5.0"), a package id
 * ("#12", pinned first) or a hint to refuse ("!V2.0"). Packages whose hint the
 * rule does not list stay eligible, ranked after the listed ones; then a
 * package carrying rocBLAS before one of hipBLASLt's folder alone, one with a
 * binary for the platform before a library folder; ties go to the newest
 * import. The user's rules (config store.match_rules) are tried
 * before the shipped defaults, and the first rule whose range, platform and
 * arch fit is used. Every candidate gets a verdict and its reasons.
 */
#include "pkg.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

/* Known pairings of community builds with HIP SDKs (DESIGN §1). */
static const char default_rules[] = "5.7=V3,V2.0; 6.1=V4.0; 6.2=V5.0; 6.4=; 7=";

#define MAX_PREFS 16

struct rule {
	struct rocmd_pkg_version lo, hi;
	int any_version;
	char platform[16];
	char arch[24];
	char prefs[MAX_PREFS][24];
	int nprefs;
	char text[160];
	const char *origin;
};

static int
parse_range(const char *s, struct rule *r)
{
	char lo[32], *dash;

	if (strcmp(s, "*") == 0) {
		r->any_version = 1;
		return 0;
	}
	snprintf(lo, sizeof(lo), "%s", s);
	dash = strchr(lo, '-');
	if (dash != NULL)
		*dash = '\0';
	if (rocmd_pkg_version_parse(lo, &r->lo) < 0)
		return ROCMD_EINVAL;
	if (dash == NULL) {
		r->hi = r->lo;
		return 0;
	}
	return rocmd_pkg_version_parse(dash + 1, &r->hi) < 0 ||
	               rocmd_pkg_version_cmp(&r->lo, &r->hi, 0) > 0
	           ? ROCMD_EINVAL
	           : 0;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
valid_pref(const char *p)
{
	struct rocmd_pkg_version v;

	if (*p == '!')
		p++;
	if (*p == '#') {
		if (p[1] == '\0')
			return 0;
		for (p++; *p; p++)
			if (!isdigit((unsigned char)*p))
				return 0;
		return 1;
	}
	return (p[0] == 'V' || p[0] == 'v') && rocmd_pkg_version_parse(p + 1, &v) == 0;
}

/* Parses one "RANGE[@PLATFORM][/ARCH]=PREFS" rule. */
static int
parse_rule(char *text, struct rule *r, char *why, size_t whylen)
{
	char *eq = strchr(text, '='), *head, *at, *slash, *save = NULL;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", text);
	if (eq == NULL) {
		snprintf(why, whylen, "rule \"%s\": expected RANGE=PREFERENCES", r->text);
		return ROCMD_EINVAL;
	}
	*eq = '\0';
	head = trim(text);
	slash = strchr(head, '/');
	if (slash != NULL) {
		*slash = '\0';
		snprintf(r->arch, sizeof(r->arch), "%s", trim(slash + 1));
		if (strncmp(r->arch, "gfx", 3) != 0) {
			snprintf(why, whylen, "rule \"%s\": arch must look like gfx1103", r->text);
			return ROCMD_EINVAL;
		}
	}
	at = strchr(head, '@');
	if (at != NULL) {
		*at = '\0';
		snprintf(r->platform, sizeof(r->platform), "%s", trim(at + 1));
		if (strcmp(r->platform, "windows") != 0 && strcmp(r->platform, "linux") != 0) {
			snprintf(why, whylen, "rule \"%s\": platform must be windows or linux",
			         r->text);
			return ROCMD_EINVAL;
		}
	}
	if (parse_range(trim(head), r) < 0) {
		snprintf(why, whylen,
		         "rule \"%s\": range must be a version (6.2), a range (6.1-6.3) or *",
		         r->text);
		return ROCMD_EINVAL;
	}
	for (char *p = strtok_r(eq + 1, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
		p = trim(p);
		if (*p == '\0')
			continue;
		if (!valid_pref(p) || strlen(p) >= sizeof(r->prefs[0]) || r->nprefs == MAX_PREFS) {
			snprintf(why, whylen,
			         "rule \"%s\": preference \"%s\" must be a version hint (V5.0), a "
			         "package id (#12) or a refusal (!V2.0)",
			         r->text, p);
			return ROCMD_EINVAL;
		}
		snprintf(r->prefs[r->nprefs++], sizeof(r->prefs[0]), "%s", p);
	}
	return 0;
}

/* Parses TEXT into RULES (up to MAX), appending after *N. */
static int
parse_rules(const char *text, const char *origin, struct rule *rules, int max, int *n, char *why,
            size_t whylen)
{
	char *copy, *save = NULL;
	int rc = 0;

	if (text == NULL)
		return 0;
	copy = strdup(text);
	if (copy == NULL)
		return ROCMD_ENOMEM;
	for (char *t = strtok_r(copy, ";", &save); t != NULL; t = strtok_r(NULL, ";", &save)) {
		if (*trim(t) == '\0')
			continue;
		if (*n == max) {
			snprintf(why, whylen, "more than %d match rules", max);
			rc = ROCMD_EINVAL;
			break;
		}
		rc = parse_rule(trim(t), &rules[*n], why, whylen);
		if (rc < 0)
			break;
		rules[(*n)++].origin = origin;
	}
	free(copy);
	return rc;
}

int
rocmd_pkg_rules_check(const char *rules, char *why, size_t whylen)
{
	struct rule r[64];
	int n = 0;

	return parse_rules(rules, "config", r, 64, &n, why, whylen);
}

static int
rule_fits(const struct rule *r, const struct rocmd_pkg_version *sdk, const char *platform,
          const char *arch)
{
	if (!r->any_version && (rocmd_pkg_version_cmp(sdk, &r->lo, 1) < 0 ||
	                        rocmd_pkg_version_cmp(sdk, &r->hi, 1) > 0))
		return 0;
	if (r->platform[0] && strcmp(r->platform, platform) != 0)
		return 0;
	if (r->arch[0] && strcmp(r->arch, arch) != 0)
		return 0;
	return 1;
}

static int
hint_equal(const char *a, const char *b)
{
	struct rocmd_pkg_version x, y;

	if (a == NULL || b == NULL || (a[0] != 'V' && a[0] != 'v') || (b[0] != 'V' && b[0] != 'v'))
		return 0;
	if (rocmd_pkg_version_parse(a + 1, &x) < 0 || rocmd_pkg_version_parse(b + 1, &y) < 0)
		return 0;
	return rocmd_pkg_version_cmp(&x, &y, 0) == 0; /* V3 == V3.0 */
}

static int
has_arch(const char *archs, const char *arch)
{
	size_t n = strlen(arch);

	for (const char *p = archs; p != NULL && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, arch, n) == 0)
			return 1;
		p = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

struct ranked {
	int idx;
	int eligible;
	int pinned;
	int pref;   /* index in the rule's list; MAX_PREFS when unlisted */
	int native;  /* has a binary for the platform */
	int rocblas; /* carries rocBLAS (not hipBLASLt's folder alone) */
	cJSON *reasons;
};

static const struct rocmd_pkg_candidate *sort_cands;

static int
cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->eligible != y->eligible)
		return y->eligible - x->eligible;
	if (x->pinned != y->pinned)
		return y->pinned - x->pinned;
	if (x->pref != y->pref)
		return x->pref - y->pref;
	if (x->rocblas != y->rocblas)
		return y->rocblas - x->rocblas;
	if (x->native != y->native)
		return y->native - x->native;
	if (sort_cands[x->idx].imported_ms != sort_cands[y->idx].imported_ms)
		return sort_cands[x->idx].imported_ms > sort_cands[y->idx].imported_ms ? -1 : 1;
	return sort_cands[x->idx].id > sort_cands[y->idx].id ? -1 : 1;
}

static void reason(struct ranked *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
reason(struct ranked *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(r->reasons, cJSON_CreateString(buf));
}

/* What candidate C carries, for PLATFORM: a binary of another platform
 * (not eligible), of this one (native), a library folder alone, or
 * hipBLASLt's folder alone (ranked after those carrying rocBLAS). */
static void
judge_content(struct ranked *r, const struct rocmd_pkg_candidate *c, const char *platform)
{
	r->rocblas = !c->lt_only;
	if (c->platform != NULL && strcmp(c->platform, "any") != 0 &&
	    strcmp(c->platform, platform) != 0) {
		r->eligible = 0;
		reason(r, "holds a %s binary, not a %s one", c->platform, platform);
	} else if (c->platform != NULL && strcmp(c->platform, platform) == 0) {
		r->native = 1;
	} else if (c->lt_only) {
		reason(r, "hipBLASLt's library folder only: rocBLAS stays as it is (ranked after "
		          "packages carrying rocBLAS)");
	} else {
		reason(r, "library folder only: the SDK's own rocBLAS binary stays");
	}
}

int
rocmd_pkg_match(const char *sdk, const char *platform, const char *arch,
                const struct rocmd_pkg_candidate *cands, size_t n, const char *rules, int *chosen,
                cJSON **explain, char *why, size_t whylen)
{
	struct rule all[80];
	const struct rule *use = NULL;
	struct rocmd_pkg_version sv;
	struct ranked *rk = NULL;
	char gen[16];
	int nrules = 0, rc;
	cJSON *ex = NULL, *arr;

	*chosen = -1;
	if (explain != NULL)
		*explain = NULL;
	if (sdk == NULL || rocmd_pkg_version_parse(sdk, &sv) < 0 || sv.n < 2) {
		snprintf(why, whylen, "SDK version \"%s\" is not a version such as 6.2.4",
		         sdk != NULL ? sdk : "");
		return ROCMD_EINVAL;
	}
	if (platform == NULL ||
	    (strcmp(platform, "windows") != 0 && strcmp(platform, "linux") != 0)) {
		snprintf(why, whylen, "platform must be windows or linux");
		return ROCMD_EINVAL;
	}
	if (arch == NULL || strncmp(arch, "gfx", 3) != 0 || strlen(arch) < 6 || strlen(arch) > 12) {
		snprintf(why, whylen, "arch \"%s\" is not a GPU arch such as gfx1103",
		         arch != NULL ? arch : "");
		return ROCMD_EINVAL;
	}
	if ((rc = parse_rules(rules, "config", all, 64, &nrules, why, whylen)) < 0 ||
	    (rc = parse_rules(default_rules, "default", all, 80, &nrules, why, whylen)) < 0)
		return rc;
	for (int i = 0; i < nrules && use == NULL; i++)
		if (rule_fits(&all[i], &sv, platform, arch))
			use = &all[i];
	rocmd_sdk_generation(sdk, gen, sizeof(gen));
	rk = calloc(n ? n : 1, sizeof(*rk));
	if (rk == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_pkg_candidate *c = &cands[i];
		struct ranked *r = &rk[i];
		char pgen[16] = "";
		r->idx = (int)i;
		r->eligible = 1;
		r->pref = MAX_PREFS;
		r->reasons = cJSON_CreateArray();
		if (c->sdk == NULL || c->sdk[0] == '\0' ||
		    rocmd_sdk_generation(c->sdk, pgen, sizeof(pgen)) < 0) {
			r->eligible = 0;
			reason(r, "its SDK generation is unknown (import it again with --sdk)");
		} else if (strcmp(pgen, gen) != 0) {
			struct rocmd_pkg_version pv;
			rocmd_pkg_version_parse(c->sdk, &pv);
			r->eligible = 0;
			if (pv.n == 1 && sv.v[0] < 7 && pv.v[0] == sv.v[0])
				reason(r,
				       "it is only known to target HIP SDK %s.x (from its binary), "
				       "which spans several generations; import it with --sdk to "
				       "pin one",
				       c->sdk);
			else
				reason(r, "built for SDK generation %s, not %s", pgen, gen);
		} else {
			reason(r, "built for SDK generation %s", gen);
		}
		judge_content(r, c, platform);
		if (!has_arch(c->archs, arch)) {
			r->eligible = 0;
			reason(r, "has no library for %s (has %s)", arch,
			       c->archs != NULL && c->archs[0] ? c->archs : "none");
		}
		if (use != NULL) {
			for (int p = 0; p < use->nprefs; p++) {
				const char *pref = use->prefs[p];
				if (pref[0] == '#' && atoll(pref + 1) == c->id) {
					r->pinned = 1;
					reason(r, "pinned by rule \"%s\"", use->text);
				} else if (pref[0] == '!' &&
				           ((pref[1] == '#' && atoll(pref + 2) == c->id) ||
				            hint_equal(pref + 1, c->version_hint))) {
					r->eligible = 0;
					reason(r, "refused by rule \"%s\"", use->text);
				} else if (hint_equal(pref, c->version_hint) &&
				           r->pref == MAX_PREFS) {
					r->pref = p;
					reason(r, "version %s is preference %d of rule \"%s\"",
					       c->version_hint, p + 1, use->text);
				}
			}
			if (r->pref == MAX_PREFS && use->nprefs > 0 && r->eligible && !r->pinned)
				reason(
				    r,
				    "version %s is not in rule \"%s\"; ranked after those it lists",
				    c->version_hint != NULL && c->version_hint[0] ? c->version_hint
				                                                  : "(none)",
				    use->text);
		}
	}
	sort_cands = cands;
	qsort(rk, n, sizeof(*rk), cmp_ranked);
	sort_cands = NULL;
	if (n > 0 && rk[0].eligible)
		*chosen = rk[0].idx;

	if (explain != NULL) {
		ex = cJSON_CreateObject();
		cJSON_AddStringToObject(ex, "sdk", sdk);
		cJSON_AddStringToObject(ex, "generation", gen);
		cJSON_AddStringToObject(ex, "platform", platform);
		cJSON_AddStringToObject(ex, "arch", arch);
		if (use != NULL) {
			cJSON *r = cJSON_AddObjectToObject(ex, "rule");
			cJSON_AddStringToObject(r, "text", use->text);
			cJSON_AddStringToObject(r, "origin", use->origin);
		} else {
			cJSON_AddNullToObject(ex, "rule");
		}
		if (*chosen >= 0)
			cJSON_AddNumberToObject(ex, "chosen", (double)cands[*chosen].id);
		else
			cJSON_AddNullToObject(ex, "chosen");
		arr = cJSON_AddArrayToObject(ex, "candidates");
		for (size_t i = 0; i < n; i++) {
			const struct rocmd_pkg_candidate *c = &cands[rk[i].idx];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "id", (double)c->id);
			cJSON_AddStringToObject(o, "name", c->name != NULL ? c->name : "");
			cJSON_AddStringToObject(o, "verdict",
			                        rk[i].idx == *chosen ? "chosen"
			                        : rk[i].eligible     ? "eligible"
			                                             : "refused");
			cJSON_AddItemToObject(o, "reasons", rk[i].reasons);
			rk[i].reasons = NULL;
			cJSON_AddItemToArray(arr, o);
		}
		*explain = ex;
	}
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(rk[i].reasons);
	free(rk);
	return 0;
}
