/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ibpost's white-box KUnit suites may see and touch of its insides,
 * and the test hooks. The functions exist in test builds only (a kernel
 * with CONFIG_KUNIT, IBPOST_TEST_HOOKS: drivers/hooks.c); the suites
 * include this header, never a layer's. The hook points are in
 * hook.h, which ibpost's own files include in every build.
 */
#ifndef _IBPOST_TEST_ACCESS_H
#define _IBPOST_TEST_ACCESS_H

#include <linux/types.h>
#include <rdma/ibpost.h>
#include "hook.h"

/**
 * struct ibpost_test_queue - one work queue's accounting, taken at once
 * @head: slots ever filled (a free-running position)
 * @tail: slots ever released
 * @mask: ring size - 1: a position's slot index is position & @mask
 * @depth: usable slots
 * @since_signal: WRs posted unsignaled since the last signaled one
 * @signal_interval: a signal is forced at least this often
 * @stage: WRs handed to the provider per call at most: a longer chain is
 *         posted in batches of as many
 * @provider_errors: posts the provider refused after ibpost's checks
 * @sinks: an iWARP send queue with a READ sink per slot
 * @posted: WRs queued (given to the provider or flushed by ibpost)
 * @completed: WRs that succeeded (signaled, or reclaimed unsignaled)
 * @flushed: WRs returned with IB_WC_WR_FLUSH_ERR
 * @failed: WRs returned with another error status
 * @forced_signals: send WRs ibpost signaled on its own
 * @refused_einval: post calls refused with -EINVAL
 * @refused_enomem: ... with -ENOMEM
 * @refused_enotconn: ... with -ENOTCONN
 * @refused_enodev: ... with -ENODEV
 * @refused_other: ... with another errno
 * @posts_one: post calls that ran the post loop's one-WR copy
 * @posts_chain: post calls that ran its copy for chains
 * @run_reclaims: send queue: runs of unsignaled WRs a signaled completion
 *                reclaimed at once, without a look at their slots
 * @comp_common: completions the handlers took on their common path
 */
struct ibpost_test_queue {
	u32 head, tail, mask, depth;
	u32 since_signal, signal_interval, stage, provider_errors;
	bool sinks;
	u64 posted, completed, flushed, failed, forced_signals;
	u64 refused_einval, refused_enomem, refused_enotconn;
	u64 refused_enodev, refused_other;
	u32 posts_one, posts_chain, run_reclaims, comp_common;
};

void ibpost_test_queue_get(struct ibpost_qp *qp, bool send,
			   struct ibpost_test_queue *tq);
u32 ibpost_test_srq_comp_common(struct ibpost_srq *srq);
int ibpost_test_queue_set_pos(struct ibpost_qp *qp, bool send, u32 pos);
void ibpost_test_replay_comp(struct ibpost_qp *qp, bool send, u32 pos,
			     enum ib_wc_status status);

/**
 * struct ibpost_test_slot - what ibpost handed the provider for one send slot
 * @signaled: posted with IB_SEND_SIGNALED, asked for or forced
 * @user_signaled: the caller asked for a success completion
 * @sink: an iWARP READ, posted behind the registration of its sink
 * @opcode: the WR's opcode as posted
 * @invalidate_rkey: @sink: the key its READ_WITH_INV invalidates, else 0
 * @sge_addr: @sink: the READ's SGE's address, else 0 (the SGEs of any
 *            other WR were its poster's, gone once the post returned)
 * @sge_lkey: @sink: that SGE's key, else 0
 * @sink_lkey: @sink: the sink MR's local key, else 0
 * @sink_rkey: @sink: its remote key, else 0
 * @sink_access: @sink: the access its registration grants, else 0
 * @sink_iova: @sink: the address it maps, else 0
 * @sink_length: @sink: the length it maps, else 0
 */
struct ibpost_test_slot {
	bool signaled, user_signaled, sink;
	enum ib_wr_opcode opcode;
	u32 invalidate_rkey;
	u64 sge_addr;
	u32 sge_lkey;
	u32 sink_lkey, sink_rkey;
	int sink_access;
	u64 sink_iova, sink_length;
};

void ibpost_test_send_slot(struct ibpost_qp *qp, u32 pos,
			   struct ibpost_test_slot *ts);

/**
 * struct ibpost_test_frwr - a QP's fast-registration pool, taken at once
 * @n: entries
 * @free: entries on the free list
 * @pending: maps whose REG_MR waits for the next send post
 * @revoking: entries whose key the work item revokes
 * @reserved: send slots kept for LOCAL_INVs
 * @maps: maps made
 * @eagain: maps refused for an empty pool
 * @regs: REG_MRs queued
 * @invs: LOCAL_INVs (or revocations) unmaps started
 * @done: unmaps that returned IBPOST_FRWR_DONE
 * @remote_inv: keys retired by a peer's SEND_WITH_INV
 * @revoked: MRs deregistered and replaced
 * @reg_failed: REG_MRs the provider failed (a flush not counted)
 */
struct ibpost_test_frwr {
	u32 n, free, pending, revoking, reserved;
	u64 maps, eagain, regs, invs, done, remote_inv, revoked, reg_failed;
};

void ibpost_test_frwr_get(struct ibpost_qp *qp, struct ibpost_test_frwr *tf);

/**
 * struct ibpost_test_rw - a QP's READ/WRITE operations, taken at once
 * @live: operations whose context has not come back yet
 * @revoking: failed operations whose MRs are being replaced
 * @mrs_used: MRs of ib_core's pool of the QP held by operations
 * @last_wrs: provider WRs the last operation queued took (its SEND too)
 * @ops: operations queued
 * @wrs: provider WRs (send slots) they took
 * @mr_ops: operations that registered memory (an iWARP READ's sink)
 * @split: operations the provider refused after their first WR, the rest
 *         flushed by ibpost
 * @revoked: MRs deregistered after a failed operation (keys revoked)
 * @lost: of those, MRs no fresh one replaced (the pool is smaller)
 */
struct ibpost_test_rw {
	u32 live, revoking, mrs_used, last_wrs;
	u64 ops, wrs, mr_ops, split, revoked, lost;
};

void ibpost_test_rw_get(struct ibpost_qp *qp, struct ibpost_test_rw *tr);

int ibpost_test_mr_users(struct ibpost_mr *mr);
bool ibpost_test_mr_lock_contended(struct ibpost_mr *mr);
bool ibpost_test_dev_iwarp(struct ibpost_dev *dev);
struct ibpost_dev *ibpost_test_qp_dev(struct ibpost_qp *qp);
enum ib_qp_state ibpost_test_qp_tracked_state(struct ibpost_qp *qp);
void ibpost_test_qp_failed(struct ibpost_qp *qp);
void ibpost_test_set_state_from(struct ibpost_qp *qp, enum ib_qp_state from,
				enum ib_qp_state to);
bool ibpost_test_qp_cm_res(struct ibpost_qp *qp, u32 *res_id);
bool ibpost_test_qp_cancel_flush(struct ibpost_qp *qp);
void ibpost_test_qp_lock(struct ibpost_qp *qp);
void ibpost_test_qp_unlock(struct ibpost_qp *qp);

struct ibpost_queue;
struct ibpost_ring_qp;
struct ibpost_slot;
struct ibpost_ring_use;
struct ib_cq;
struct ib_wc;
void ibpost_test_ring_init(struct ibpost_queue *q, struct ibpost_qp *owner,
			   struct ibpost_ring_qp *rqp, bool send,
			   void (*done_fn)(struct ibpost_qp *qp, void *context,
					   const struct ib_wc *wc),
			   struct ib_cq *cq, struct ibpost_slot *slots,
			   struct ibpost_ring_use **uses, u32 size, u32 pos);
void ibpost_test_ring_flush(struct ibpost_queue *q);
void ibpost_test_ring_unclaim(struct ibpost_queue *q, u32 count);
union ibpost_send_copy;
void ibpost_test_ring_stage(struct ibpost_queue *q,
			    union ibpost_send_copy *copies, const void **wrs,
			    struct ib_send_wr **prefix, u32 max, u32 interval);
int ibpost_test_ring_post_send(struct ibpost_queue *q,
			       const struct ib_send_wr *wr,
			       struct ib_send_wr **prefix,
			       const struct ib_send_wr **bad_wr);
int ibpost_test_ring_post_recv(struct ibpost_queue *q,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr);
u32 ibpost_test_ring_finish_synthetic(struct ibpost_queue *q);
bool ibpost_test_ring_take(struct ibpost_queue *q, struct ibpost_comp *comp);
unsigned long ibpost_test_cq_grace_periods(void);

#endif /* _IBPOST_TEST_ACCESS_H */
