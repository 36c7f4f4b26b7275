/*
 * Auto-sync of deployed libraries after SDK changes (deploy-sync.c): policy
 * deploy.sync (off, report, deploy). rocmd_deploy_sync_start hooks it into
 * SDK discovery once both it and deploy (deploy-methods.h) have started.
 */
#ifndef ROCMD_DEPLOY_SYNC_H
#define ROCMD_DEPLOY_SYNC_H

struct rocmd_server;

void rocmd_deploy_sync_start(struct rocmd_server *srv);

#endif
