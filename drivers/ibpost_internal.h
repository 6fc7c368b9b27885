/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost internals shared by the module's files; not part of the API.
 */
#ifndef _IBPOST_INTERNAL_H
#define _IBPOST_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <linux/fault-inject.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/refcount.h>
#include <rdma/rdma_cm.h>
#include <rdma/ibpost.h>
#include "ibpost_test_access.h"

/*
 * Locking. The locks, outermost first: each is taken only under locks
 * above it in this list, never under one below it.
 *
 *   ibpost_client_mutex (dev.c)  mutex: the client list; device add and
 *                                remove; the debugfs "devices" file
 *   qp->mutex                    mutex: one QP's state changes, teardown
 *                                and DIRECT polling (a lockdep class per
 *                                QP, see ibpost_qp_new())
 *   dev->qp_lock                 mutex: dev->qps, the device's provider
 *                                objects, releasing its MRs
 *   q->lock (qp->sq, qp->rq)     spinlock: one work queue's ring; taken
 *                                with interrupts off by the post path
 *                                (see post.c) and by whatever completes
 *                                a slot (see comp.c), in any context;
 *                                with bottom halves off by the rest;
 *                                never in hard IRQ context
 *   dev->mr_lock                 spinlock, bottom halves off: dev->mrs
 *
 * Three leaves, under which no other lock is taken:
 *
 *   ibpost_dev_lock (dev.c)      spinlock, interrupts off: the device
 *                                list and names, for lookups from any
 *                                context
 *   ibpost_cm_lock (cm.c)        spinlock: ibpost_cm_qps and the cm_ids'
 *                                event handlers
 *   ibpost_fault_lock (fault.c)  spinlock, interrupts off: should_fail()
 *                                on the fault attribute, taken under
 *                                q->lock by the post path while armed
 *
 * The nestings the code has:
 *
 *   ibpost_client_mutex -> ibpost_dev_lock   device add, remove, listing
 *   ibpost_client_mutex -> dev->qp_lock      removal's debugfs removal
 *   ibpost_client_mutex -> qp->mutex and below: ibpost_client callbacks
 *                        may create, connect and destroy QPs, register
 *                        and deregister MRs, post
 *   qp->mutex -> dev->qp_lock    teardown; a DIRECT callback's dereg
 *   qp->mutex -> q->lock         state changes, teardown, flushes
 *   qp->mutex -> ibpost_cm_lock  ibpost_cm_destroy_qp()
 *   qp->mutex -> another QP's qp->mutex: ibpost_qp_connect_loopback()
 *                        (address order); a callback under one QP's
 *                        mutex polling another or moving it to ERR
 *   dev->qp_lock -> q->lock        ibpost_dereg_mr(), debugfs "stats"
 *   dev->qp_lock -> dev->mr_lock   MR allocation, release, dereg
 *   dev->qp_lock -> ibpost_cm_lock ibpost_cm_attach() at QP creation
 *   q->lock -> dev->mr_lock        the post path's ibpost_mr_lookup()
 *                                  and __ibpost_mr_pin()
 *
 * The queue locks share one lockdep class: no two are ever held
 * together. Device removal drops dev->qp_lock before each QP's
 * teardown, so dev->qp_lock is never held while qp->mutex is taken. A
 * callback run under qp->mutex by its own QP's polling (qp->poller ==
 * current) does not take it again: ibpost_qp_modify(), ibpost_poll()
 * and the MR waits check qp->poller; ibpost_poll() and
 * ibpost_qp_to_err() only try it.
 *
 * Callbacks and work items, their context and the locks held:
 *
 *   consumer send_done/recv_done: never under q->lock, dev->qp_lock or
 *     dev->mr_lock (the slot is released first). From the CQ's own
 *     context (IB_POLL_SOFTIRQ: softirq; IB_POLL_WORKQUEUE and
 *     IB_POLL_UNBOUND_WORKQUEUE: ib_core's work item) with no ibpost
 *     lock; for IB_POLL_DIRECT, inside ibpost_poll() and ibpost's own
 *     waits (MR (de)registration, drain), under qp->mutex; from
 *     qp->flush_work with no lock, but never a DIRECT queue's (its WRs
 *     flushed in ERR come back through its consumer's polling, see
 *     ibpost_queue_direct_cb()); from ibpost_queue_flush() at teardown
 *     and RESET, under qp->mutex, and under ibpost_client_mutex too
 *     when a consumer destroys a QP from its ibpost_client callback.
 *     An IB_POLL_SOFTIRQ queue's callbacks run with bottom halves off
 *     on every one of these paths, as in its CQ's softirq. A softirq
 *     callback may run on the stack of a task that holds dev->qp_lock
 *     (softirqs run at spin_unlock_bh()); it cannot sleep, so never
 *     waits for it.
 *   ibpost_client add/remove: process context, under
 *     ibpost_client_mutex only. At remove the device is already marked
 *     IBPOST_DEV_REMOVING and unlisted, its QPs still up: they are torn
 *     down after every remove returned, without ibpost_client_mutex.
 *   ibpost_cm_handler() (rdma_cm events): rdma_cm's process context,
 *     with the id's handler mutex held; takes ibpost_cm_lock, then,
 *     after dropping it, qp->mutex; calls the consumer's handler with
 *     neither held.
 *   CQ handlers: ibpost_send_done() and ibpost_recv_done() take q->lock
 *     with interrupts off and drop it before the consumer's callback;
 *     ibpost_marker_done() and ibpost_sink_reg_done() take no lock.
 *   qp->flush_work (ibpost_wq): no lock; waited for under qp->mutex by
 *     teardown and RESET, so its callbacks must not wait for that QP's
 *     qp->mutex (ibpost_qp_modify() refuses them, -EWOULDBLOCK).
 *   q->sink_work (ibpost_wq): takes q->lock; flushed under qp->mutex at
 *     teardown.
 *   mr->release_work (ibpost_wq): takes dev->qp_lock, then
 *     dev->mr_lock.
 *
 * ibpost_wq is WQ_MEM_RECLAIM: a ULP may destroy a QP from a reclaim
 * work item of its own, and the destroy flushes these work items.
 */

/* dev->flags */
enum {
	IBPOST_DEV_REMOVING,	/* remove started: no new QPs, posts -ENODEV */
};

/**
 * struct ibpost_stats - counters of one work queue, under its lock
 * @posted: WRs queued (given to the provider or flushed by ibpost)
 * @completed: WRs that succeeded (signaled or reclaimed unsignaled)
 * @flushed: WRs returned with IB_WC_WR_FLUSH_ERR
 * @failed: WRs returned with any other error status
 * @forced_signals: send WRs ibpost signaled on its own
 * @refused: WRs refused by a post call, by reason
 */
struct ibpost_stats {
	u64 posted;
	u64 completed;
	u64 flushed;
	u64 failed;
	u64 forced_signals;
	struct {
		u64 einval, enomem, enotconn, enodev, other;
	} refused;
};

/**
 * struct ibpost_dev - ibpost's context on one ib_device
 * @ref: held by the device list until removal and by every consumer
 *       reference and QP
 * @ibdev: the device; NULL once removal has finished
 * @pd: ibpost's protection domain on it
 * @flags: IBPOST_DEV_* bits
 * @node: entry in the global device list
 * @qp_lock: protects @qps, the MRs' release against removal, and the
 *           device's provider objects (@ibdev, @pd) while it is held;
 *           never held while a consumer callback runs
 * @qps: every QP on the device whose provider objects may still exist
 * @nr_qps: length of @qps, for debugfs
 * @mr_lock: protects @mrs
 * @mrs: every live MR registered on the device
 * @debugfs: this device's debugfs directory
 * @name: the ib_device's name
 * @retired: send and receive counters of the QPs destroyed on the device
 * @iwarp: rdma_protocol_iwarp() of the device's first port, at its add
 */
struct ibpost_dev {
	struct kref ref;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	unsigned long flags;
	struct list_head node;
	struct mutex qp_lock;	/* see the kernel-doc above */
	struct list_head qps;
	unsigned int nr_qps;
	spinlock_t mr_lock;	/* protects @mrs */
	struct list_head mrs;
	struct dentry *debugfs;
	char name[IB_DEVICE_NAME_MAX];
	struct ibpost_stats retired[2];	/* under qp_lock */
	bool iwarp;		/* rdma_protocol_iwarp(): see below */
};

/*
 * iWARP devices (rdma_protocol_iwarp()) differ in what ibpost absorbs:
 * RC only, connected through rdma_cm only (iw_cm), no immediate data,
 * at most attrs.max_sge_rd SGEs per READ (siw: 1), and a READ sink that
 * is written by the peer's tagged READ response.
 */
static inline bool ibpost_dev_iwarp(const struct ibpost_dev *dev)
{
	return dev->iwarp;
}

/**
 * struct ibpost_mr - a registered kernel buffer
 * @dev: the device (holds a reference)
 * @node: entry in dev->mrs
 * @buf: the kernel virtual address registered
 * @len: its length
 * @dma: the DMA address of @buf
 * @lkey: the key local SGEs use (the PD's local DMA lkey)
 * @ibmr: the fast-registration MR granting remote access, or NULL
 * @rkey: @ibmr's remote key as registered, or 0; set before the MR is
 *        returned to its consumer and never changed, so that
 *        ibpost_mr_rkey() may read it in any context, also while device
 *        removal releases @ibmr
 * @iova: the remote address @ibmr maps the buffer at, or 0; as @rkey
 * @qp: the QP @ibmr was registered through, while it lives
 * @sg: the scatterlist @ibmr maps
 * @access: IB_ACCESS_* granted
 * @users: SGEs of posted WRs referencing this MR, not yet completed, each
 *         counted here, plus one for each queue with SGEs outstanding
 *         in it as its hit (struct ibpost_queue), plus one for each
 *         dirty READ sink pinning it (sink.c): 0 exactly when no posted
 *         WR references the MR
 * @release_work: releases an MR whose internal WR outlived its waiter
 * @dead: the provider objects are released (by ibpost_dereg_mr() or by
 *        device removal); only the final free is left to do
 * @revoked: no new post may use it: ibpost_dereg_mr() is invalidating it,
 *           or a registration has not finished yet. It stays on @dev's
 *           list, so device removal still finds and releases it.
 */
struct ibpost_mr {
	struct ibpost_dev *dev;
	struct list_head node;
	void *buf;
	size_t len;
	u64 dma;
	u32 lkey;
	struct ib_mr *ibmr;
	u32 rkey;
	u64 iova;
	struct ibpost_qp *qp;
	struct scatterlist sg;
	int access;
	atomic_t users;
	struct work_struct release_work;
	bool dead;
	bool revoked;
};

/**
 * struct ibpost_sync - an internal WR whose completion a thread waits for
 * @done: completed with the WR's completion
 * @status: the completion status
 * @ref: held by the waiter and by the posted slot
 * @orphan: the MR the WR concerns, when its waiter gave up (the WR did not
 *          come back even after the QP was moved to ERR): released once
 *          the WR completes; under the send queue's lock
 */
struct ibpost_sync {
	struct completion done;
	enum ib_wc_status status;
	refcount_t ref;
	struct ibpost_mr *orphan;
};

/* slot->state */
enum ibpost_slot_state {
	IBPOST_SLOT_FREE,
	IBPOST_SLOT_POSTED,	/* owned by the provider */
	IBPOST_SLOT_DONE,	/* completion waiting for ibpost_get_*_comp */
};

/**
 * struct ibpost_slot - one queue entry, in posting order
 * @cqe: what the provider hands back in wc->wr_cqe
 * @queue: the queue this slot belongs to
 * @context: the caller's context (its wr_id)
 * @sync: an internal WR (memory registration): its completion wakes a
 *        waiter and is never shown to the consumer
 * @since_before: the queue's since_signal before this slot was claimed,
 *                restored when the provider refuses it
 * @pos: the free-running ring position the slot was claimed at: with the
 *       CQ's restrack id, the WR's completion id in the trace events
 * @state: enum ibpost_slot_state
 * @signaled: posted with IB_SEND_SIGNALED (asked or forced): the
 *             provider will return this slot itself
 * @user_signaled: the caller asked for a success completion
 * @synthetic: not given to the provider (the QP is in ERR): ibpost
 *              completes it with a flush itself
 * @sink: an iWARP READ, posted behind the REG_MR of its slot's sink
 * @spare: 0; with it a claim writes @state and the flags in one store
 * @nmr: number of MRs in the slot's MR array (ibpost_slot_mrs()): those
 *       the WR's SGEs reference outside the queue's hit, users counted
 * @nhit: the WR's SGEs in the queue's hit, counted in its hit_users
 * @opcode: send queue: the WR's opcode as posted (test builds only, for
 *          the test accessor)
 * @wc_status: the completion's status, while @state is IBPOST_SLOT_DONE
 * @done_node: entry in the queue's list of waiting completions
 * @wc: the rest of that completion, for struct ibpost_comp
 * @wc.opcode: its opcode
 * @wc.byte_len: its byte count
 * @wc.imm_data: its immediate data, in host order, or 0
 * @wc.vendor_err: its vendor error
 *
 * The WR itself is not kept: the copy handed to the provider lives in the
 * queue's stage during the post call only (see post.c). What a ring of
 * slots costs per QP is what the consumer pays for ibpost's accounting,
 * so the slot keeps only what the completion side needs.
 */
struct ibpost_slot {
	struct ib_cqe cqe;
	struct ibpost_queue *queue;
	void *context;
	struct ibpost_sync *sync;
	u32 since_before;
	u32 pos;
	u8 state;
	u8 signaled:1;
	u8 user_signaled:1;
	u8 synthetic:1;
	u8 sink:1;
	u8 spare:4;
	u8 nmr;
	u8 nhit;
	u8 opcode;
	u8 wc_status;
	struct list_head done_node;
	struct {
		u32 opcode;
		u32 byte_len;
		u32 imm_data;
		u32 vendor_err;
	} wc;
};

/* 80 bytes on 64-bit: a ring of 256 slots (depth 128 on rxe) is 5 pages. */
static_assert(!IS_ENABLED(CONFIG_64BIT) || sizeof(struct ibpost_slot) <= 80);
static_assert(IB_WC_GENERAL_ERR <= U8_MAX && IB_WR_REG_MR <= U8_MAX);

/*
 * The copy of one send WR, of any kind, handed to the provider (a send
 * queue's stage entries). The ib_send_wr comes first in each kind.
 */
union ibpost_send_copy {
	struct ib_send_wr send;
	struct ib_rdma_wr rdma;
	struct ib_ud_wr ud;
	struct ib_atomic_wr atomic;
	struct ib_reg_wr reg;
};

/**
 * struct ibpost_sink - an iWARP READ's sink registration (see sink.c)
 * @mr: a fast-registration MR of ibpost's PD, owned by one send slot
 * @reg: the REG_MR of one READ's sink, posted just before that READ
 * @cqe: @reg's completion entry (unsignaled: only an error or a flush)
 * @sge: the READ's SGE, with @mr's key
 * @sg: the one-entry scatterlist @mr maps: the sink's DMA address
 * @dirty: @mr's key may still be valid after its READ did not succeed;
 *         revoked by the queue's sink_work (under the queue's lock)
 * @held: dirty, and @reg may still be with the provider (it took the
 *        REG_MR and refused the READ): @mr may not be deregistered before
 *        a later send WR succeeded or the provider's QP is destroyed
 * @held_pos: then, the ring position of the READ refused
 * @inv_key: the key the last READ posted with this sink invalidates
 * @pin: the READ's MR, kept in use until then
 */
struct ibpost_sink {
	struct ib_mr *mr;
	struct ib_reg_wr reg;
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct scatterlist sg;
	bool dirty;
	bool held;
	u32 held_pos;
	u32 inv_key;
	struct ibpost_mr *pin;
};

/*
 * A held sink's MR and the READ buffer it may still reach, kept aside
 * from the sink (which gets a fresh MR) until a send WR posted at or
 * after @pos succeeded, or the QP is destroyed.
 */
struct ibpost_sink_held {
	struct ibpost_sink_held *next;
	struct ib_mr *mr;
	struct ibpost_mr *pin;
	u32 pos;
};

/* Pages one iWARP READ sink registration maps: up to 1 MiB per READ. */
#define IBPOST_SINK_PAGES	257

/**
 * struct ibpost_queue - one work queue (send or receive) and its CQ
 * @lock: serializes posting and completion bookkeeping
 * @qp: the owning QP
 * @cq: the completion queue of this work queue; NULL once freed
 * @cq_id: @cq's restrack id, kept for the trace events after it is freed
 * @dev_id: the ib_device's index, which with @cq_id names the CQ
 * @slots: @mask + 1 entries, a power of two, used as a ring
 * @mask: ring size - 1: index = position & mask, consistent when the
 *        free-running u32 positions wrap
 * @depth: usable slots (provider's grant minus the one kept for draining),
 *         at most @mask + 1
 * @head: slots ever filled (free-running, index = head & mask)
 * @tail: slots ever released
 * @done: completions waiting for ibpost_get_*_comp()
 * @wait: woken when @done gains an entry
 * @done_fn: the consumer's callback, or NULL to queue on @done
 * @since_signal: WRs posted unsignaled since the last signaled one
 * @signal_interval: force a signal at least this often
 * @provider_errors: posts the provider refused after ibpost's checks passed
 * @nr_synthetic: slots posted while the QP was in ERR (slot->synthetic)
 *                not returned yet; read unlocked by a DIRECT poll, which
 *                returns them (ibpost_queue_direct_cb())
 * @stats: counters, shown in debugfs
 * @max_sge: SGEs per WR, the size of each slot's MR array
 * @mr_array: the slots' MR arrays, (@mask + 1) * @max_sge entries
 * @stage: the copies of one batch of WRs handed to the provider, filled
 *         and posted under @lock (post.c): @stage.send of a send queue,
 *         @stage.recv of a receive queue, @stage_max entries
 * @stage.send: a send queue's copies
 * @stage.recv: a receive queue's copies
 * @stage_wr: the caller's WR each copy in @stage was made from
 * @stage_max: WRs per provider call at most; a longer chain is posted in
 *             batches of as many
 * @provider_bad: where a plain post (post.c) has the provider put its
 *                bad_wr, which it does not read: one WR was refused whole
 * @spare_mrs: where the MRs of a WR that finds no free slot are looked up
 * @seed_lock: serializes the vector seed operations, which build their
 *             SGEs in @seed_sge and @seed_mrs; taken with interrupts
 *             disabled, before @lock
 * @seed_sge: @max_sge SGEs for a vector seed operation
 * @seed_mrs: their MRs
 * @mr_hit: the MR an SGE is looked for first: the last one found while
 *          @hit_users was 0
 * @hit_users: SGEs of posted WRs in @mr_hit; while not 0, the queue holds
 *             one user of @mr_hit for them all, and @mr_hit stays
 * @is_send: this is the send queue
 * @sinks: iWARP send queues: one READ sink per slot (see sink.c), or NULL
 * @sink_max_len: the longest READ one sink maps
 * @sink_work: revokes the keys of dirty sinks (see sink.c)
 * @sinks_held: the MRs of held sinks, kept aside (written by sink_work
 *              only)
 * @held_wait: a held sink waits for a send WR at or after @held_pos to
 *             succeed (under @lock)
 * @held_pos: the latest held sink's READ position
 * @held_done: a send WR at @held_done or later succeeded (under @lock)
 */
struct ibpost_queue {
	spinlock_t lock;	/* posting and completion bookkeeping */
	struct ibpost_qp *qp;
	struct ib_cq *cq;
	u32 cq_id;
	u32 dev_id;
	struct ibpost_slot *slots;
	u32 mask;
	u32 depth;
	u32 head;
	u32 tail;
	struct list_head done;
	wait_queue_head_t wait;
	void (*done_fn)(struct ibpost_qp *qp, void *context,
			const struct ib_wc *wc);
	u32 since_signal;
	u32 signal_interval;
	u32 provider_errors;
	u32 nr_synthetic;
	struct ibpost_stats stats;
	u32 max_sge;
	struct ibpost_mr **mr_array;
	union {
		union ibpost_send_copy *send;
		struct ib_recv_wr *recv;
	} stage;
	const void **stage_wr;
	u32 stage_max;
	union {
		const struct ib_send_wr *send;
		const struct ib_recv_wr *recv;
	} provider_bad;
	struct ibpost_mr **spare_mrs;
	spinlock_t seed_lock;	/* see the kernel-doc above */
	struct ib_sge *seed_sge;
	struct ibpost_mr **seed_mrs;
	struct ibpost_mr *mr_hit;
	u32 hit_users;
	bool is_send;
	struct ibpost_sink *sinks;
	u32 sink_max_len;
	struct work_struct sink_work;
	struct ibpost_sink_held *sinks_held;
	bool held_wait;
	u32 held_pos;
	u32 held_done;
};

/* sink.c: iWARP READ sinks */
int ibpost_sinks_alloc(struct ibpost_queue *q);
void ibpost_sinks_free(struct ibpost_queue *q);

/* Whether the READ @wr, posted to @q, goes to a sink (iWARP). */
static inline bool ibpost_sink_wanted(struct ibpost_queue *q,
				      const struct ib_send_wr *wr)
{
	return q->sinks && wr->opcode == IB_WR_RDMA_READ &&
	       wr->num_sge == 1 && wr->sg_list[0].length;
}

int ibpost_sink_prepare(struct ibpost_queue *q, const struct ib_send_wr *wr);
void ibpost_sink_attach(struct ibpost_queue *q, struct ibpost_slot *slot,
			struct ib_send_wr *wr);
struct ib_send_wr *__ibpost_sink_head(struct ibpost_queue *q,
				      struct ibpost_slot *slot);
bool ibpost_sink_reg_index(struct ibpost_queue *q,
			   const struct ib_send_wr *bad, u32 *idx);
void ibpost_sink_dirty(struct ibpost_queue *q, struct ibpost_slot *slot,
		       bool reg_queued);
void ibpost_sink_held_done(struct ibpost_queue *q, u32 pos);

/* @slot's first WR in the provider's chain: its sink's REG_MR, or @wr. */
static inline struct ib_send_wr *ibpost_sink_head(struct ibpost_queue *q,
						  struct ibpost_slot *slot,
						  struct ib_send_wr *wr)
{
	return slot->sink ? __ibpost_sink_head(q, slot) : wr;
}

/* ibpost_mr_sge(), inline for the seed operations' one SGE. */
static inline int __ibpost_mr_sge(const struct ibpost_mr *mr,
				  const void *addr, u32 length,
				  struct ib_sge *sge)
{
	const char *p = addr, *b = mr->buf;

	if (p < b || p > b + mr->len || length > (b + mr->len) - p)
		return -EINVAL;
	sge->addr = mr->dma + (p - b);
	sge->length = length;
	sge->lkey = mr->lkey;
	return 0;
}

/* Whether @sge lies inside @mr, under one of its keys. */
static inline bool ibpost_mr_covers(const struct ibpost_mr *mr,
				    const struct ib_sge *sge)
{
	u64 base;

	if (sge->lkey == mr->lkey)
		base = mr->dma;
	else if (mr->ibmr && sge->lkey == mr->ibmr->lkey)
		base = mr->ibmr->iova;
	else
		return false;
	return sge->addr >= base && sge->addr - base <= mr->len &&
	       sge->length <= mr->len - (sge->addr - base);
}

struct ibpost_mr *__ibpost_mr_find(struct ibpost_queue *q,
				   const struct ib_sge *sge);
struct ibpost_mr *__ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr);

/*
 * The MR of @q's device that holds @sge, its use counted (mr.c): an SGE
 * in the queue's hit while that has users, the common case, is counted
 * here without a call. *@hit: whether the use is counted in the hit; an
 * MR found while the hit has no users becomes the hit. (No address of the
 * caller's goes to the call: a post needs no stack canary for it.)
 */
static __always_inline struct ibpost_mr *
ibpost_mr_find(struct ibpost_queue *q, const struct ib_sge *sge, bool *hit)
{
	lockdep_assert_held(&q->lock);
	if (q->hit_users && ibpost_mr_covers(q->mr_hit, sge)) {
		q->hit_users++;
		*hit = true;
		return q->mr_hit;
	}
	*hit = !q->hit_users;
	return __ibpost_mr_find(q, sge);
}

/* The same for an MR a post names itself (the seed operations). */
static __always_inline struct ibpost_mr *
ibpost_mr_pin(struct ibpost_queue *q, struct ibpost_mr *mr, bool *hit)
{
	lockdep_assert_held(&q->lock);
	if (q->hit_users && mr == q->mr_hit) {
		q->hit_users++;
		*hit = true;
		return mr;
	}
	*hit = !q->hit_users;
	return __ibpost_mr_pin(q, mr);
}

/*
 * Fill the slot at q->head for posting; the caller checked for room. Its
 * cqe and queue were set when the ring was (ibpost_queue_slots_init()).
 */
static inline struct ibpost_slot *ibpost_slot_claim(struct ibpost_queue *q,
						    void *context,
						    bool signaled,
						    bool user_signaled)
{
	struct ibpost_slot *slot = &q->slots[q->head & q->mask];

	lockdep_assert_held(&q->lock);
	slot->context = context;
	slot->state = IBPOST_SLOT_POSTED;
	slot->signaled = signaled;
	slot->user_signaled = user_signaled;
	slot->synthetic = false;
	slot->sink = false;
	slot->spare = 0;
	slot->pos = q->head++;
	return slot;
}

/* The MR array of @slot, a slot of @q's ring. */
static inline struct ibpost_mr **ibpost_slot_mrs(const struct ibpost_queue *q,
						 const struct ibpost_slot *slot)
{
	return &q->mr_array[(size_t)(slot - q->slots) * q->max_sge];
}

/**
 * struct ibpost_marker - a WR posted after all others to drain a queue
 * @cqe: its completion entry
 * @done: completed when the marker's completion arrives
 */
struct ibpost_marker {
	struct ib_cqe cqe;
	struct completion done;
};

/* Send opcodes below this have an entry in a QP's table (post.c). */
#define IBPOST_FAST_OPS		16

/**
 * struct ibpost_send_fast - one opcode's entry in a QP's send table
 * @sges: the most SGEs a WR of the opcode may have, plus one; 0: a WR of
 *        the opcode is always checked in full
 * @size: the size of its WR structure (struct ib_send_wr, ib_rdma_wr)
 */
struct ibpost_send_fast {
	u16 sges;
	u16 size;
};

/**
 * struct ibpost_qp - a QP with its CQs and accounting
 * @ref: the consumer's reference, and one per user that must not see the
 *       struct freed under it (device removal, a cm event, an MR's
 *       invalidation); the last ibpost_qp_put() frees it
 * @mutex: serializes state changes, teardown and DIRECT polling of this
 *         QP; consumer callbacks may run under it (DIRECT polling, flushes)
 * @mutex_key: @mutex's own lockdep class (see ibpost_qp_new())
 * @poller: the task polling this QP's DIRECT CQs, or running its
 *          callbacks at teardown or RESET, under @mutex, so that a
 *          callback's own wait or state change does not take @mutex again
 * @releasing: the task running ibpost_qp_destroy()'s release calls
 * @removal_seen: device removal has torn this QP down (or found it torn
 *                down); under dev->qp_lock
 * @dev: the device (holds a reference)
 * @ibqp: the provider's QP; NULL once torn down
 * @attr: the attributes, with the capacities the provider granted
 * @node: entry in dev->qps
 * @sq: the send queue
 * @rq: the receive queue
 * @state: the QP state as ibpost last set or saw it
 * @flush_work: completes synthetic (ERR-state) WRs
 * @dead: the device is gone: posts fail with -ENODEV
 * @left_reset: the QP was moved out of RESET at least once
 * @ord: RC: the READs and atomics it may have outstanding as initiator
 *       (its max_rd_atomic, or on iWARP the ORD its connection
 *       negotiated); 0 refuses them at post, where a provider would
 *       stall them (rxe) or fail its send queue after queuing them (siw).
 *       Set before the state that allows sends
 * @send_fast: the send opcodes a post checks through a table, filled at
 *             creation (ibpost_send_fast_init())
 * @port: the port the QP is bound to
 * @debugfs: this QP's debugfs file, or NULL
 * @drain_ah: UD only: an address handle for the send queue's drain marker
 * @sq_marker: the drain marker of the send queue
 * @rq_marker: the drain marker of the receive queue
 * @reclaim_cqe: the completion entries of the reclaim marker (drain.c), a
 *               send marker posted in ERR behind send WRs that succeeded
 *               unsignaled, so that their slots come back; the one of
 *               @reclaim_gen is current
 * @reclaim_gen: under sq.lock: flipped when a RESET finds a reclaim
 *               marker with the provider, whose completion, should it
 *               still come, is then ignored
 * @reclaim_end: under sq.lock: the send ring's head when it was posted
 * @reclaim_posted: under sq.lock: it is with the provider
 * @reclaim_blocked: under sq.lock: a move to RESET is draining the QP;
 *                   no reclaim marker is posted until it is done
 * @qpn: the provider QP's number, kept for log lines and trace events
 *       after @ibqp is gone
 * @caller: the module credited in restrack for the QP and its CQs
 * @cm_id: ibpost_qp_create_cm() only: the rdma_cm_id, NULL once detached
 *         (cleared under ibpost_cm_lock); never trusted at teardown,
 *         see cm.c
 * @cm_res_id: @cm_id's restrack id, to tell whether the id still exists
 * @cm_tracked: @cm_res_id is valid (rdma_cm tracked the id)
 * @cm_handler: the consumer's event handler of @cm_id, which ibpost's
 *              own handler calls on
 * @cm_node: entry in cm.c's list of QPs on a cm_id, under ibpost_cm_lock
 */
struct ibpost_qp {
	refcount_t ref;
	struct mutex mutex;	/* see the kernel-doc above */
	struct lock_class_key mutex_key;
	struct task_struct *poller;
	struct task_struct *releasing;
	bool removal_seen;
	struct ibpost_dev *dev;
	struct ib_qp *ibqp;
	struct ibpost_qp_attr attr;
	struct list_head node;
	struct ibpost_queue sq;
	struct ibpost_queue rq;
	enum ib_qp_state state;
	struct work_struct flush_work;
	bool dead;
	bool left_reset;
	u8 ord;
	struct ibpost_send_fast send_fast[IBPOST_FAST_OPS];
	u32 port;
	struct dentry *debugfs;
	struct ib_ah *drain_ah;
	struct ibpost_marker sq_marker;
	struct ibpost_marker rq_marker;
	struct ib_cqe reclaim_cqe[2];
	u8 reclaim_gen;
	u32 reclaim_end;
	bool reclaim_posted;
	bool reclaim_blocked;
	u32 qpn;
	const char *caller;
	struct rdma_cm_id *cm_id;
	u32 cm_res_id;
	bool cm_tracked;
	int (*cm_handler)(struct rdma_cm_id *id, struct rdma_cm_event *event);
	struct list_head cm_node;
};

/*
 * Whether @q is a DIRECT queue with a callback. Its callbacks run only
 * from its consumer's own calls, ibpost_poll() and ibpost's waits inside
 * the consumer's calls (registration, RESET, destroy), never from
 * ibpost's flush worker, which leaves such a queue's WRs flushed in ERR
 * to them (device removal, which polls too, aside).
 */
static inline bool ibpost_queue_direct_cb(const struct ibpost_queue *q)
{
	return q->done_fn && q->qp->attr.poll_ctx == IB_POLL_DIRECT;
}

/* dev.c */
void ibpost_dev_release(struct kref *ref);
int ibpost_client_init(void);
void ibpost_client_exit(void);
void ibpost_show_devs(struct seq_file *m);
struct ibpost_dev *ibpost_dev_of(struct ib_device *ibdev);

/* qp.c */
struct ibpost_qp *ibpost_qp_new(struct ibpost_dev *dev,
				const struct ibpost_qp_attr *attr,
				const char *caller, struct rdma_cm_id *id);
void ibpost_qp_teardown(struct ibpost_qp *qp, bool removal);
void ibpost_qp_put(struct ibpost_qp *qp);
void ibpost_set_state(struct ibpost_qp *qp, enum ib_qp_state state);
void ibpost_set_state_from(struct ibpost_qp *qp, enum ib_qp_state from,
			   enum ib_qp_state to);
int ibpost_qp_flush_outstanding(struct ibpost_qp *qp);
int ibpost_loopback_av(struct ibpost_qp *qp, struct rdma_ah_attr *ah);
void *ibpost_zalloc_exact(size_t size);
void ibpost_free_exact(void *p, size_t size);

/* cm.c */
void ibpost_cm_attach(struct ibpost_qp *qp);
void ibpost_cm_destroy_qp(struct ibpost_qp *qp);
int ibpost_cm_create_qp(struct ibpost_qp *qp, struct ib_qp_init_attr *init);

/* main.c */
extern struct workqueue_struct *ibpost_wq;

/* comp.c */
void ibpost_queue_init(struct ibpost_queue *q, struct ibpost_qp *qp,
		       bool is_send);
void ibpost_queue_slots_init(struct ibpost_queue *q);
void ibpost_sync_put(struct ibpost_sync *sync);
u32 ibpost_queue_finish_synthetic(struct ibpost_queue *q, u32 budget);
void ibpost_queue_release_done(struct ibpost_queue *q);
void ibpost_slot_unclaim(struct ibpost_queue *q, u32 count);
void ibpost_queue_flush(struct ibpost_queue *q, bool drained, bool drop_done);
void ibpost_sq_reclaim_done(struct ib_cq *cq, struct ib_wc *wc);
void ibpost_recv_done(struct ib_cq *cq, struct ib_wc *wc);
int ibpost_cq_poll(struct ib_cq *cq, int budget);
bool ibpost_qp_poll_direct(struct ibpost_qp *qp, struct ibpost_queue *q);

/* drain.c */
int ibpost_drain_init(struct ibpost_qp *qp);
void ibpost_drain_cleanup(struct ibpost_qp *qp);
bool ibpost_drain(struct ibpost_qp *qp);
void ibpost_sq_reclaim_retired(struct ibpost_qp *qp);
unsigned int ibpost_drain_timeout_ms(void);

/* mr.c */
struct ibpost_mr *ibpost_mr_lookup(struct ibpost_dev *dev,
				   const struct ib_sge *sge);
void ibpost_mr_put_users(struct ibpost_mr **mrs, unsigned int n);
void ibpost_mr_hit_put(struct ibpost_queue *q, unsigned int n);
void __ibpost_mr_uses_put(struct ibpost_queue *q, struct ibpost_mr **mrs,
			  unsigned int nmr, unsigned int nhit);
struct ibpost_mr *ibpost_mr_hit_pin(struct ibpost_queue *q);
void ibpost_dev_release_mrs(struct ibpost_dev *dev);
void ibpost_mr_release_orphan(struct ibpost_mr *mr);
void ibpost_mrs_forget_qp(struct ibpost_qp *qp);

/*
 * ibpost_mr_uses_put()'s common case: @nmr 0, the @nhit SGEs in a hit
 * that keeps other users. Return: whether it was that, and is done.
 */
static __always_inline bool ibpost_mr_uses_put_hit(struct ibpost_queue *q,
						   unsigned int nmr,
						   unsigned int nhit)
{
	lockdep_assert_held(&q->lock);
	if (likely(!nmr && nhit < q->hit_users)) {
		q->hit_users -= nhit;
		return true;
	}
	return false;
}

/*
 * Release a WR's MR uses: @nmr listed in @mrs, @nhit in @q's hit. The
 * common case (above) without a call.
 */
static inline void ibpost_mr_uses_put(struct ibpost_queue *q,
				      struct ibpost_mr **mrs,
				      unsigned int nmr, unsigned int nhit)
{
	if (!ibpost_mr_uses_put_hit(q, nmr, nhit))
		__ibpost_mr_uses_put(q, mrs, nmr, nhit);
}

/*
 * The rules a post checks a WR against, named by the refusal trace events
 * (ibpost_post_send_err, ibpost_post_recv_err); ibpost_trace.h lists
 * them again, for TRACE_DEFINE_ENUM() and ibpost_show_rule().
 */
enum ibpost_rule {
	IBPOST_RULE_NONE,		/* no rule broken */
	IBPOST_RULE_NOT_CONNECTED,	/* the QP's state */
	IBPOST_RULE_DEVICE_GONE,
	IBPOST_RULE_BAD_OPCODE,		/* for the QP type or device */
	IBPOST_RULE_BAD_FLAGS,
	IBPOST_RULE_TOO_MANY_SGES,
	IBPOST_RULE_NO_SG_LIST,		/* num_sge without sg_list */
	IBPOST_RULE_INLINE_OPCODE,	/* inline on an opcode without */
	IBPOST_RULE_INLINE_TOO_LONG,
	IBPOST_RULE_READ_SGES,		/* max_sge_rd; iWARP: one */
	IBPOST_RULE_READ_FENCED,	/* iWARP */
	IBPOST_RULE_READ_TOO_LONG,	/* iWARP: one sink registration */
	IBPOST_RULE_READ_SINK,		/* iWARP: the slot's sink unusable */
	IBPOST_RULE_NO_ORD,		/* READ/atomic, initiator depth 0 */
	IBPOST_RULE_ATOMIC_MALFORMED,
	IBPOST_RULE_UD_NO_AH,
	IBPOST_RULE_AH_OTHER_DEVICE,
	IBPOST_RULE_SGE_OUTSIDE_MR,	/* or its MR of another device */
	IBPOST_RULE_NO_SLOT,
	IBPOST_RULE_FAULT_INJECTED,
	IBPOST_RULE_PROVIDER,		/* the provider refused it */
};

/* post.c */
int ibpost_post_send_mrs(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr,
			 struct ibpost_mr **mrs, struct ibpost_sync *sync);
int ibpost_post_recv_mrs(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr,
			 struct ibpost_mr **mrs);
void ibpost_flush_work(struct work_struct *work);
void ibpost_stats_refused(struct ibpost_stats *st, int err);
void ibpost_send_fast_init(struct ibpost_qp *qp);
void ibpost_stats_add(struct ibpost_stats *sum, const struct ibpost_stats *st);

/*
 * Whether @q's WRs go to the flush worker rather than the provider: the
 * QP is in ERR, or, for the send queue, in SQE (a UD QP's send error).
 */
static inline bool ibpost_queue_flushing(const struct ibpost_qp *qp,
					 const struct ibpost_queue *q)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_ERR || (state == IB_QPS_SQE && q->is_send);
}

/*
 * The QP-level state check shared by both queues' posts, under the
 * queue's lock: 0, or why the QP takes no post.
 */
static inline int ibpost_state_check(struct ibpost_qp *qp, bool send)
{
	if (unlikely(qp->dead || test_bit(IBPOST_DEV_REMOVING,
					  &qp->dev->flags)))
		return -ENODEV;
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
	case IB_QPS_SQE:	/* IBA: sends are flushed, receives work */
	case IB_QPS_ERR:
		return 0;
	case IB_QPS_INIT:
	case IB_QPS_RTR:
	case IB_QPS_SQD:
		/* IBA: receives may be posted before the QP is connected. */
		return send ? -ENOTCONN : 0;
	default:
		return -ENOTCONN;
	}
}

/* Test hooks (enum ibpost_hook) and the suites' accessors: hooks.c. */
#ifdef IBPOST_TEST_HOOKS
int __ibpost_hook(enum ibpost_hook point, void *obj);
extern ibpost_hook_fn ibpost_hook_cur;
static inline int ibpost_hook(enum ibpost_hook point, void *obj)
{
	if (unlikely(READ_ONCE(ibpost_hook_cur)))
		return __ibpost_hook(point, obj);
	return 0;
}

/* Whether a suite has a hook set: a post then asks at every point. */
static inline bool ibpost_hooks_set(void)
{
	return READ_ONCE(ibpost_hook_cur);
}

/* A send slot's opcode, kept for the test accessor only. */
static inline void ibpost_slot_set_opcode(struct ibpost_slot *slot,
					  enum ib_wr_opcode opcode)
{
	slot->opcode = opcode;
}

/* A point whose hook may sleep: not asked where the caller cannot. */
static inline void ibpost_hook_sleepable(enum ibpost_hook point, void *obj)
{
	if (!irqs_disabled())
		ibpost_hook(point, obj);
}
#else
static inline int ibpost_hook(enum ibpost_hook point, void *obj)
{
	return 0;
}

static inline void ibpost_hook_sleepable(enum ibpost_hook point, void *obj)
{
}

static inline bool ibpost_hooks_set(void)
{
	return false;
}

static inline void ibpost_slot_set_opcode(struct ibpost_slot *slot,
					  enum ib_wr_opcode opcode)
{
}
#endif

/* fault.c */
void ibpost_fault_init(struct dentry *root);
void ibpost_fault_exit(void);

#ifdef CONFIG_FAULT_INJECTION
extern struct fault_attr ibpost_fail_attr;
int __ibpost_fault_check(void);

/*
 * ibpost_fault_armed(): whether the WR at hand may meet an injected
 * fault. ibpost_fault_check(): 0, or the errno an injected fault refuses
 * it with, the gate being open. The gate repeats the first exits of
 * should_fail() (6.1 and 6.12 alike), which change nothing: no fail-nth
 * pending for the task, then probability 0 or times 0. Skipping the call
 * there is exact, and costs two loads from one read-mostly line plus
 * in_task() and current->fail_nth: no call, lock or atomic operation. A
 * static key cannot stand in for it: the framework's debugfs files write
 * the attribute directly, with no hook to flip a key.
 */
static inline bool ibpost_fault_armed(void)
{
	return unlikely(READ_ONCE(ibpost_fail_attr.probability) &&
			atomic_read(&ibpost_fail_attr.times)) ||
	       unlikely(in_task() && READ_ONCE(current->fail_nth));
}

/*
 * A chain's post opens the gate once, before its first WR (@armed), and
 * the framework then judges each WR: a fault is armed (the attribute or
 * the task's fail-nth) before the post it aims at; one armed during a
 * post races with it whichever WR looks.
 */
static inline int ibpost_fault_check(bool armed)
{
	return unlikely(armed) ? __ibpost_fault_check() : 0;
}
#else
static inline bool ibpost_fault_armed(void)
{
	return false;
}

static inline int ibpost_fault_check(bool armed)
{
	return 0;
}
#endif

/* debugfs.c */
void ibpost_debugfs_init(void);
void ibpost_debugfs_exit(void);
void ibpost_debugfs_add_dev(struct ibpost_dev *dev);
void ibpost_debugfs_rename_dev(struct ibpost_dev *dev, const char *name);
void ibpost_debugfs_remove_dev(struct ibpost_dev *dev);
void ibpost_debugfs_add_qp(struct ibpost_qp *qp);
void ibpost_debugfs_remove_qp(struct ibpost_qp *qp);

#endif /* _IBPOST_INTERNAL_H */
