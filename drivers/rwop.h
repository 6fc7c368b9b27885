/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDMA READ and WRITE of an sg list through ib_core's rdma_rw API, each
 * operation one context however many WRs it takes, its WRs in the send
 * queue's slots (see rwop.c).
 */
#ifndef _IBPOST_RWOP_H
#define _IBPOST_RWOP_H

#include <linux/list.h>
#include <linux/rwsem.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct ibpost_dev;
struct ibpost_qp;
struct ibpost_qp_attr;

/**
 * struct ibpost_rw_stats - a QP's operations, under the send queue's lock
 * @ops: operations queued
 * @wrs: provider WRs (send slots) they took, a chained SEND included
 * @mr_ops: operations that registered memory (ib_core chose its MR path)
 * @split: operations the provider refused after their first WR: the rest
 *         flushed by ibpost, the operation queued whole
 * @revoked: MRs deregistered after a failed operation (their keys
 *           revoked), replaced but for @lost
 * @lost: of those, MRs no fresh one could replace: the pool is smaller
 * @last_wrs: provider WRs the last operation queued took
 */
struct ibpost_rw_stats {
	u64 ops, wrs, mr_ops, split, revoked, lost;
	u32 last_wrs;
};

/**
 * struct ibpost_rw - a QP's READ/WRITE operations (embedded in it)
 * @sem: held for read by a post from before ib_core's context is set up
 *       (which reads the provider's QP) until it is queued or destroyed;
 *       for write by the teardown before the provider's QP goes
 * @live: operations whose context has not come back, under the send
 *        queue's lock
 * @revoke: failed operations whose MRs @revoke_work replaces, under the
 *          send queue's lock
 * @revoke_work: replaces the MRs of a failed operation, whose state the
 *               provider may have left unknown, then lets its context go
 * @dead: torn down: no operation is set up, no MR replaced
 * @stats: counters
 */
struct ibpost_rw {
	struct rw_semaphore sem;
	struct list_head live;
	struct list_head revoke;
	struct work_struct revoke_work;
	bool dead;
	struct ibpost_rw_stats stats;
};

/* rwop.c */
void ibpost_rw_init(struct ibpost_qp *qp);
int ibpost_rw_attr_check(const struct ibpost_qp_attr *attr);
void ibpost_rw_flush(struct ibpost_qp *qp);
bool ibpost_rw_revoking(struct ibpost_qp *qp);
void ibpost_rw_quiesce(struct ibpost_qp *qp);
void ibpost_rw_release(struct ibpost_qp *qp);

#endif /* _IBPOST_RWOP_H */
