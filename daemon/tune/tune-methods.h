/*
 * The tune.* methods (tune-methods.c; a stand-in on Windows until the tuner
 * is ported there). The scheduler they drive is tune-sched.h.
 */
#ifndef ROCMD_TUNE_METHODS_H
#define ROCMD_TUNE_METHODS_H

#include "daemon/core/methods.h"

extern const struct rocmd_method rocmd_methods_tune[];

struct rocmd_tune_job;
struct cJSON;
/* One queue job as the methods show it (tune.status, tune.results, tune.report). */
struct cJSON *rocmd_tune_job_json(const struct rocmd_tune_job *j);
/* tune.report (tune-report.c): every finished job with its evaluations in order. */
int rocmd_tune_m_report(struct rocmd_conn *conn, const struct cJSON *params,
                        struct cJSON **result, char *why, size_t whylen);

#endif
