/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring engine: a work queue (struct ibpost_queue) with its ring of
 * slots, its staging, signal policy, reclaim and completion bookkeeping,
 * and the helpers on them (the submit side: ring_post.h). It knows the
 * QP it points to by name only, a client that prefixes WRs (iWARP READ
 * sinks) only through its ops; of the memory a WR's SGEs reference, only
 * the count of its uses (struct ibpost_ring_use).
 */
#ifndef _IBPOST_RING_H
#define _IBPOST_RING_H

#include <linux/cache.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include "ibpost_base.h"

struct ibpost_comp;
struct ibpost_qp;
struct ibpost_slot;

/**
 * struct ibpost_stats - counters of one work queue, under its lock
 * @posted: WRs queued (given to the provider or flushed by ibpost)
 * @completed: WRs that succeeded (signaled or reclaimed unsignaled)
 * @forced_signals: send WRs ibpost signaled on its own
 * @flushed: WRs returned with IB_WC_WR_FLUSH_ERR
 * @failed: WRs returned with any other error status
 * @refused: WRs refused by a post call, by reason
 *
 * The first three are the ones written per WR or per post call; a queue
 * keeps them on its lock's cache line (struct ibpost_queue).
 */
struct ibpost_stats {
	u64 posted;
	u64 completed;
	u64 forced_signals;
	u64 flushed;
	u64 failed;
	struct {
		u64 einval, enomem, enotconn, enodev, other;
	} refused;
};

/* post.c and seed.c count refusals; debugfs.c and qp.c add up. */
void ibpost_stats_refused(struct ibpost_stats *st, int err);
void ibpost_stats_add(struct ibpost_stats *sum, const struct ibpost_stats *st);

/**
 * struct ibpost_sync - an internal WR whose completion a thread waits for
 * @done: completed with the WR's completion
 * @status: the completion status
 * @ref: held by the waiter and by the posted slot
 * @orphan: what the WR concerns (an MR), when its waiter gave up (the WR
 *          did not come back even after the QP was moved to ERR):
 *          @orphan_release(@orphan) runs once the WR completes, with no
 *          lock held; under the send queue's lock
 * @orphan_release: see @orphan
 * @end: set where the WR belongs to an object of the client's, @orphan
 *       (a fast registration, frwr.c), which the sync is part of and
 *       which counts no reference (@ref and @done are unused): called
 *       under the queue's lock when the WR (in @slot) is over, with its
 *       status, in place of the waiter's wake-up. Return: enum
 *       ibpost_sync_end: an internal WR is hidden; a carrier (a WR
 *       posted with IB_SEND_SIGNALED, whose wr_id is the consumer's
 *       context) is delivered as any consumer WR, or deferred: its slot
 *       stays, taken, until the client releases it
 *       (ibpost_ring_release_deferred()), and only then comes back,
 *       flushed
 * @unclaimed: with @end: called under the queue's lock when the WR's slot
 *             is released unposted (the provider refused it, or a WR
 *             before it, in its post call)
 */
struct ibpost_sync {
	struct completion done;
	enum ib_wc_status status;
	refcount_t ref;
	void *orphan;
	void (*orphan_release)(void *orphan);
	int (*end)(void *orphan, struct ibpost_slot *slot,
		   enum ib_wc_status status);
	void (*unclaimed)(void *orphan);
};

/* What struct ibpost_sync's @end says of the WR's context. */
enum ibpost_sync_end {
	IBPOST_SYNC_HIDE,
	IBPOST_SYNC_DELIVER,
	IBPOST_SYNC_DEFER,
};

/**
 * struct ibpost_ring_use - the uses of one piece of memory by posted WRs
 * @users: SGEs of posted WRs referencing it, not yet completed, each
 *         counted here, plus one for each queue with SGEs outstanding in
 *         it as its hit (struct ibpost_queue), plus one for each other
 *         holder its owner counts (a dirty READ sink): 0 exactly when no
 *         posted WR references it
 *
 * Embedded in what a client registers (struct ibpost_mr), which finds it
 * and counts a use when a WR is posted; the ring releases the uses when
 * the WR is over. The owner only reads the count (dereg: -EBUSY while
 * not 0); nothing runs when it drops to 0.
 */
struct ibpost_ring_use {
	atomic_t users;
};

/**
 * struct ibpost_ring_dma - a range a posted WR writes, handed back to the
 *                          CPU when the WR is over
 * @addr: its DMA address
 * @len: bytes
 * @dir: the direction its memory is mapped in
 */
struct ibpost_ring_dma {
	u64 addr;
	u32 len;
	u32 dir;
};

/* slot->state */
enum ibpost_slot_state {
	IBPOST_SLOT_FREE,
	/*
	 * Owned by the provider; a signaled send slot only in [tail, head),
	 * unsignaled ones also behind the tail (reclaimed with their run).
	 */
	IBPOST_SLOT_POSTED,
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
 * @prefixed: posted behind a prefix WR of the client's (an iWARP READ
 *            behind its sink's REG_MR, sink.c): the queue's @stage_prefix
 *            entry of the WR's batch index names it during the post call,
 *            and the client's ops hear of the slot's failure
 * @reserve: a carrier's slot, taken from the queue's reserve, which gets
 *           it back when the tail passes the slot
 * @deferred: a carrier's slot its client keeps after its WR (or none)
 *            ended, until it releases it: not with the provider, not yet
 *            to be flushed (the flush walks skip it)
 * @spare: 0; with it a claim writes @state and the flags in one store
 * @nuse: entries in the slot's use array (ibpost_slot_uses()): the uses
 *        the WR's SGEs hold outside the queue's hit, each counted
 * @nhit: the WR's SGEs in the queue's hit, counted in its hit_users
 * @ndma: entries in the slot's DMA array (ibpost_slot_dma()): the ranges
 *        the WR writes in memory ibpost mapped, synced for the CPU when
 *        the WR is over, before its context is handed back
 * @opcode: send queue: the WR's opcode as posted (test builds only, for
 *          the test accessor)
 * @wc_status: the completion's status, while @state is IBPOST_SLOT_DONE
 * @pad: 0
 * @bits: @state to @pad as one word, which the completion handlers test
 *        at once (ibpost_slot_common())
 * @done_node: entry in the queue's list of waiting completions; the rest
 *             of the completion is in the queue's @parked entry of the
 *             slot's index
 * @run: a signaled send slot, while posted (its completion reads it
 *       before @done_node may take its place): the run of unsignaled WRs
 *       claimed between the previous signaled claim and this one (its
 *       @since_before of them, ending at @pos)
 * @run.hits: their SGEs in the queue's hit (the queue's @run_hits at the
 *            claim), or IBPOST_RUN_BROKEN set: one of them is not plain,
 *            or the ring broke the run (ibpost_ring_run_break())
 * @run.gen: the queue's @run_gen at the claim: the run stays untouched
 *           while that is still the queue's
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
	union {
		struct {
			u8 state;
			u8 signaled:1;
			u8 user_signaled:1;
			u8 synthetic:1;
			u8 prefixed:1;
			u8 reserve:1;
			u8 deferred:1;
			u8 spare:2;
			u8 nuse;
			u8 nhit;
			u8 opcode;
			u8 wc_status;
			u8 ndma;
			u8 pad;
		};
		u64 bits;
	};
	union {
		struct list_head done_node;
		struct {
			u32 hits;
			u64 gen;
		} run;
	};
};

/* One cache line on 64-bit: a ring of 256 slots (depth 128 on rxe) is 4 pages. */
static_assert(!IS_ENABLED(CONFIG_64BIT) || sizeof(struct ibpost_slot) <= 64);
/* @bits covers @state to @pad, no more, no less. */
static_assert(offsetofend(struct ibpost_slot, pad) ==
	      offsetofend(struct ibpost_slot, bits) &&
	      offsetof(struct ibpost_slot, state) ==
	      offsetof(struct ibpost_slot, bits));
static_assert(IB_WC_GENERAL_ERR <= U8_MAX && IB_WR_REG_MR <= U8_MAX);

static_assert(IB_WC_WITH_NETWORK_HDR_TYPE < 1 << 8);

/**
 * struct ibpost_parked - what a completion parked for ibpost_get_*_comp()
 *                        keeps besides its slot (struct ibpost_comp's
 *                        fields from the provider's struct ib_wc)
 * @opcode: its opcode
 * @byte_len: its byte count
 * @ex: its immediate data in host order, or the rkey it invalidated, by
 *      @wc_flags; else 0
 * @vendor_err: its vendor error
 * @src_qp: UD: the sender's QP number
 * @slid: UD: the sender's LID
 * @pkey_index: UD: the P_Key index
 * @wc_flags: its IB_WC_* flags (all below 1 << 8)
 * @sl: UD: the service level
 * @dlid_path_bits: UD: the destination LID's path bits
 * @network_hdr_type: UD on RoCE: the network header
 *
 * Only a queue without a callback parks completions, so only such a queue
 * has an array of these (one per slot), and the slot stays one line.
 */
struct ibpost_parked {
	u32 opcode;
	u32 byte_len;
	u32 ex;
	u32 vendor_err;
	u32 src_qp;
	u32 slid;
	u16 pkey_index;
	u8 wc_flags;
	u8 sl;
	u8 dlid_path_bits;
	u8 network_hdr_type;
};

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

struct ibpost_queue;

/**
 * struct ibpost_ring_ops - what a ring tells the client that puts prefix
 *                          WRs before its WRs (slot->prefixed: iWARP READ
 *                          sinks, sink.c), under the queue's lock
 * @slot_failed: a prefixed slot's WR ended without success, or was not
 *               queued though its prefix was (@prefix_taken); the client
 *               may take over the slot's uses (clearing its counts)
 * @send_succeeded: while the queue's @watch_success is set: the send WR
 *                  at ring position @pos succeeded
 *
 * Both are called whenever the queue's ops are set: a client sets both.
 */
struct ibpost_ring_ops {
	void (*slot_failed)(struct ibpost_queue *q, struct ibpost_slot *slot,
			    bool prefix_taken);
	void (*send_succeeded)(struct ibpost_queue *q, u32 pos);
};

/**
 * struct ibpost_ring_qp - what the rings know of the QP they serve
 * @ibqp: the provider's QP, which the rings' WRs are posted to (post.c,
 *        drain.c, the reclaim marker); NULL once torn down
 * @qpn: its number, kept for log lines and trace events after @ibqp is
 *       gone
 * @state: the QP state as ibpost last set or saw it: a change a post
 *         must see is written under the send queue's lock (a failed
 *         completion's under its own queue's, with cmpxchg() where it
 *         must not undo an ERR); teardown and set-up write it outside
 * @ud: a UD QP: a send error moves it to SQE, not ERR; else RC
 * @iwarp: its device is iWARP
 * @poll_ctx: how its CQs are polled
 * @dead: torn down (destroy, device removal): no post reaches the
 *        provider (posts fail with -ENODEV); set under the send queue's
 *        lock
 * @flush_work: completes the WRs posted while the QP is in ERR
 *              (slot->synthetic), on ibpost_wq; set up by the QP
 * @ibsrq: a shared receive queue's ring (srq.c): the provider's SRQ, which
 *         the ring's receive WRs are posted to (@ibqp is NULL, @state
 *         RTS); NULL once torn down, and for a QP
 *
 * Embedded in the QP (struct ibpost_qp), or in a shared receive queue
 * (struct ibpost_srq); its queues point to it. The ring reads the QP
 * through this only: the rest of the QP is its clients'.
 */
struct ibpost_ring_qp {
	struct ib_qp *ibqp;
	u32 qpn;
	enum ib_qp_state state;
	bool ud;
	bool iwarp;
	enum ib_poll_context poll_ctx;
	bool dead;
	struct work_struct flush_work;
	struct ib_srq *ibsrq;
};

/**
 * struct ibpost_ring_post - one post call, as its client's loop hands it
 *                           to the ring
 * @rqp: the QP, as the ring knows it
 * @q: the queue posted to; its lock is held from the checks to the tail
 * @flags: the interrupt state spin_lock_irqsave() saved
 * @start: the ring position of the chain's first WR: its completion id
 * @n: WRs checked and claimed, from @start on
 * @off: of those, the WRs handed on (to the provider or the flush
 *       worker): the staged batch is [@start + @off, @start + @n)
 * @chain: the chain's length, counted only while the post events are on
 * @refuse: test builds: the WR from which the SUBMIT hook has "the
 *          provider" refuse the chain, or -1
 * @hooked: test builds: the SUBMIT hook was asked (at the first batch)
 * @synthetic: the QP is in ERR (or its iWARP connection ending): every
 *             batch goes to the flush worker
 * @send: @q is the send queue: a constant in each client's loop, so that
 *        the compiler folds the direction away
 * @whole: the post's WRs from @whole_from on are one operation of the
 *         client's (rwop.c), never split: should the provider refuse one
 *         after its first, the rest is flushed by ibpost and the
 *         operation counts as queued
 * @split: that happened
 * @whole_from: the operation's first WR in the post (fast registrations
 *              go before it)
 * @head: send: the staged batch's first WR as the provider gets it (its
 *        copy, or the copy's prefix), set as that WR is linked
 * @bad: the caller's first WR not queued, or NULL
 * @rule: the rule @bad broke
 * @ret: 0, or why @bad was refused
 */
struct ibpost_ring_post {
	struct ibpost_ring_qp *rqp;
	struct ibpost_queue *q;
	unsigned long flags;
	u32 start;
	u32 n;
	u32 off;
	u32 chain;
	int refuse;
	bool hooked;
	bool synthetic;
	bool send;
	bool whole;
	bool split;
	u32 whole_from;
	struct ib_send_wr *head;
	const void *bad;
	enum ibpost_rule rule;
	int ret;
};

/**
 * struct ibpost_queue - one work queue (send or receive) and its CQ
 *
 * Its first cache line (the struct is aligned to one) holds @lock and
 * every field that the poster and the completer both write per WR or per
 * call, all under @lock: taking the lock moves that line to the CPU that
 * takes it anyway, so they add no transfer of their own. Read-mostly
 * fields follow. On 64-bit without lock debugging this is checked below.
 *
 * @lock: serializes posting and completion bookkeeping
 * @qp: the owning QP, handed to @done_fn; the ring reads it through @rqp.
 *      NULL for a shared receive queue, whose completions go to the QP
 *      that took the WR (its receive CQ's context: that QP's receive
 *      queue), or to none (the SRQ's own flushes)
 * @rqp: what the ring knows of it
 * @dev: the device, for the clients' MR checks (by name only)
 * @cq: the completion queue of this work queue; NULL once freed
 * @cq_id: @cq's restrack id, kept for the trace events after it is freed
 * @dev_id: the ib_device's index, which with @cq_id names the CQ
 * @slots: @mask + 1 entries, a power of two, used as a ring
 * @mask: ring size - 1: index = position & mask, consistent when the
 *        free-running u32 positions wrap
 * @depth: usable slots (provider's grant minus the one kept for draining),
 *         at most @mask + 1
 * @head: slots ever filled (free-running, index = head & mask, but with
 *        @free_idx)
 * @tail: slots ever released (unused with @free_idx: its walks start a
 *        ring's size before @head)
 * @free_idx: with @any_order: the indices of the free slots, a FIFO of
 *            mask + 1 entries from @free_head to @free_tail (free-running
 *            positions): claimed at the head, the oldest freed first (so
 *            that a late completion of a slot finds it still free for a
 *            long time, as in ring order), freed at the tail, and a
 *            refused post's claims given back at the head; else NULL (a
 *            QP's queues claim and free in ring order)
 * @free_head: see @free_idx
 * @free_tail: see @free_idx
 * @any_order: set before ibpost_ring_alloc(): a shared receive queue's
 *             ring, whose WRs any QP may take and complete in any order
 *             (and a provider may lose, a QP destroyed as it took one):
 *             it claims free slots wherever they are (@free_idx), so one
 *             slot held long holds itself only; it always has a callback
 *             (it parks no completion)
 * @done: completions waiting for ibpost_get_*_comp()
 * @wait: woken when @done gains an entry
 * @done_fn: the consumer's callback, or NULL to queue on @done
 * @cqe: ib_cqe mode: every context is a struct ib_cqe, whose ->done()
 *       gets the completion (@done_fn is NULL)
 * @since_signal: WRs posted unsignaled since the last signaled one
 * @run_hits: send queue: their SGEs in @hit, or with IBPOST_RUN_BROKEN
 *            set (struct ibpost_slot's @run); written by the poster, and
 *            by a run's break (ibpost_ring_run_break())
 * @signal_interval: force a signal at least this often
 * @run_gen: send queue: bumped by whatever frees, flushes or marks a slot
 *           otherwise than a signaled WR's in-order completion
 *           (ibpost_ring_run_break()); a run is reclaimed at once only
 *           while the generation its signaled slot saw is current (64
 *           bits: never the same again). Read by poster and completer,
 *           written on a break only (on iWARP, once per READ with a
 *           sink)
 * @provider_errors: posts the provider refused after ibpost's checks passed
 * @reserved: send queue: slots kept back for carriers (the invalidations
 *            of fast registrations, frwr.c): a consumer's WR finds
 *            @depth - @reserved slots. A carrier's slot takes one
 *            (slot->reserve) and gives it back when the tail passes it,
 *            so that @reserved plus the slots in use never exceed @depth;
 *            under @lock
 * @nr_synthetic: slots posted while the QP was in ERR (slot->synthetic)
 *                not returned yet; read unlocked by a DIRECT poll, which
 *                returns them (ibpost_queue_direct_cb())
 * @stats: counters, shown in debugfs
 * @max_sge: SGEs per WR, the size of each slot's use array
 * @use_array: the slots' use arrays, (@mask + 1) * @max_sge entries
 * @dma_dev: the device the memory of its WRs is mapped for
 * @dma_array: the slots' DMA arrays, (@mask + 1) * @max_sge entries
 * @parked: without @done_fn: what each slot's parked completion keeps
 *          besides the slot (struct ibpost_parked), @mask + 1 entries;
 *          else NULL
 * @stage: the copies of one batch of WRs handed to the provider, filled
 *         and posted under @lock (post.c): @stage.send of a send queue,
 *         @stage.recv of a receive queue, @stage_max entries
 * @stage.send: a send queue's copies
 * @stage.recv: a receive queue's copies
 * @stage_wr: the caller's WR each copy in @stage was made from
 * @stage_prefix: a send queue's prefix WR of each copy in @stage whose
 *                slot is prefixed (else stale), chained before the copy
 * @stage_max: WRs per provider call at most; a longer chain is posted in
 *             batches of as many
 * @spare_uses: where the uses of a WR that finds no free slot are counted
 * @spare_dma: where such a WR's DMA ranges are recorded
 * @hit: the use an SGE is counted in first: the last one adopted while
 *       @hit_users was 0 (ibpost_ring_hit_adopt())
 * @hit_users: SGEs of posted WRs in @hit; while not 0, the queue holds
 *             one user of @hit for them all, and @hit stays
 * @is_send: this is the send queue
 * @ops: set by the client that marks slots (sink.c), or NULL
 * @key_retired: receive queue: called with the key a received
 *               SEND_WITH_INV retired (IB_WC_WITH_INVALIDATE), before
 *               the completion is delivered, no lock held; set by the
 *               client whose registrations the key may be (frwr.c's
 *               pools, any QP's of the device), or NULL
 * @watch_success: under @lock: call @ops->send_succeeded for each send WR
 *                 that succeeds (set and cleared by that client)
 * @refused_taken: under @lock: the provider's refusal being handled took
 *                 a prefix, and @ops heard of it: not retried
 * @provider_bad: under @lock: where the provider's post call names the
 *                WR it refused (ibpost_ring_provider_post()); NULL between
 *                posts, written only by a refusal, so that no post call
 *                stores to it
 * @provider_bad.send: a send queue's
 * @provider_bad.recv: a receive queue's
 * @refusal: under @lock: the post whose batch the provider refused, while
 *           ibpost_ring_submit_error() (ring.c) handles it
 * @reclaim_cqe: send queue: the completion entries of the reclaim marker
 *               (ibpost_ring_reclaim_retired()), a send marker posted in
 *               ERR behind send WRs that succeeded unsignaled, so that
 *               their slots come back;
 *               the one of @reclaim_gen is current
 * @reclaim_gen: under @lock: flipped when a RESET finds a reclaim marker
 *               with the provider, whose completion, should it still
 *               come, is then ignored
 * @reclaim_end: under @lock: the ring's head when it was posted
 * @reclaim_posted: under @lock: it is with the provider
 * @reclaim_blocked: under @lock: a move to RESET is draining the QP; no
 *                   reclaim marker is posted until it is done
 * @test_posts: test builds: the post calls that ran the post loop's
 *              one-WR copy ([0]) and its chain copy ([1]), under @lock
 * @test_run_reclaims: test builds: runs of unsignaled WRs reclaimed at
 *                     once (ibpost_send_reclaim_before()), under @lock
 * @test_comp_common: test builds: completions the handlers took on their
 *                    common path (ibpost_slot_finish_common()), under
 *                    @lock
 */
struct ibpost_queue {
	/* Written by poster and completer alike: the lock's line. */
	spinlock_t lock;	/* posting and completion bookkeeping */
	u32 head;
	u32 tail;
	u32 free_head;
	u32 free_tail;
	u32 hit_users;
	u32 since_signal;
	u32 run_hits;
	struct ibpost_ring_use *hit;
	struct ibpost_stats stats;
	/* Read-mostly, or written rarely. */
	struct ibpost_qp *qp;
	struct ibpost_ring_qp *rqp;
	struct ibpost_dev *dev;
	struct ib_cq *cq;
	u32 cq_id;
	u32 dev_id;
	struct ibpost_slot *slots;
	u32 mask;
	u32 depth;
	u32 *free_idx;
	bool any_order;
	struct list_head done;
	wait_queue_head_t wait;
	void (*done_fn)(struct ibpost_qp *qp, void *context,
			const struct ib_wc *wc);
	bool cqe;
	u32 signal_interval;
	u64 run_gen;
	u32 provider_errors;
	u32 reserved;
	u32 nr_synthetic;
	u32 max_sge;
	struct ibpost_ring_use **use_array;
	struct ib_device *dma_dev;
	struct ibpost_ring_dma *dma_array;
	struct ibpost_parked *parked;
	union {
		union ibpost_send_copy *send;
		struct ib_recv_wr *recv;
	} stage;
	const void **stage_wr;
	struct ib_send_wr **stage_prefix;
	u32 stage_max;
	struct ibpost_ring_use **spare_uses;
	struct ibpost_ring_dma *spare_dma;
	bool is_send;
	const struct ibpost_ring_ops *ops;
	void (*key_retired)(struct ibpost_dev *dev, u32 rkey);
	bool watch_success;
	bool refused_taken;
	union {
		const struct ib_send_wr *send;
		const struct ib_recv_wr *recv;
	} provider_bad;
	struct ibpost_ring_post refusal;
	struct ib_cqe reclaim_cqe[2];
	u8 reclaim_gen;
	u32 reclaim_end;
	bool reclaim_posted;
	bool reclaim_blocked;
#ifdef IBPOST_TEST_HOOKS
	u32 test_posts[2];
	u32 test_run_reclaims;
	u32 test_comp_common;
#endif
} ____cacheline_aligned;

/*
 * The poster's and the completer's shared fields on the lock's line:
 * checked where the lock is a 4-byte word (no lock debugging, no RT).
 */
#if defined(CONFIG_64BIT) && !defined(CONFIG_DEBUG_SPINLOCK) && \
	!defined(CONFIG_DEBUG_LOCK_ALLOC) && !defined(CONFIG_PREEMPT_RT) && \
	SMP_CACHE_BYTES >= 64
static_assert(offsetofend(struct ibpost_queue, stats.forced_signals) <= 64);
#endif

/*
 * The slots of @q claimed and not released: in ring order (a QP's
 * queues), or anywhere in the ring (@q->free_idx).
 */
static inline u32 ibpost_queue_used(const struct ibpost_queue *q)
{
	return q->free_idx ? q->mask + 1 - (q->free_tail - q->free_head) :
			     q->head - q->tail;
}

/* The slot @q claims next (a free one). */
static inline struct ibpost_slot *ibpost_slot_next(const struct ibpost_queue *q)
{
	if (unlikely(q->free_idx))
		return &q->slots[q->free_idx[q->free_head & q->mask]];
	return &q->slots[q->head & q->mask];
}

/* Whether @q hands completions to a callback rather than parking them. */
static inline bool ibpost_queue_calls_back(const struct ibpost_queue *q)
{
	return q->done_fn || q->cqe;
}

/*
 * Whether @context is a usable ib_cqe, as every context posted on a queue
 * in ib_cqe mode (@q->cqe) must be: any WR may come back (an error or a
 * flush completes even an unsignaled one). The post path tests the mode
 * once per post, then this per WR.
 */
static inline bool ibpost_context_is_cqe(const void *context)
{
	const struct ib_cqe *cqe = context;

	return cqe && cqe->done;
}

/*
 * Fill the slot at q->head for posting (@any: @q->any_order, a constant
 * where the caller knows it: the next free one, ibpost_slot_next()); the
 * caller checked for room. Its cqe and queue were set when the ring was
 * (ibpost_queue_slots_init()).
 */
static __always_inline struct ibpost_slot *
__ibpost_slot_claim(struct ibpost_queue *q, void *context, bool signaled,
		    bool user_signaled, const bool any)
{
	/* Read once: the slot's stores below could alias it. */
	u32 pos = q->head;
	struct ibpost_slot *slot;

	lockdep_assert_held(&q->lock);
	if (any)
		slot = &q->slots[q->free_idx[q->free_head++ & q->mask]];
	else
		slot = &q->slots[pos & q->mask];
	slot->context = context;
	slot->state = IBPOST_SLOT_POSTED;
	slot->signaled = signaled;
	slot->user_signaled = user_signaled;
	slot->synthetic = false;
	slot->prefixed = false;
	slot->reserve = false;
	slot->deferred = false;
	slot->spare = 0;
	slot->pos = pos;
	q->head = pos + 1;
	return slot;
}

/* struct ibpost_slot's @run.hits: the run is not reclaimed at once. */
#define IBPOST_RUN_BROKEN	BIT(31)

/*
 * Something other than a signaled send WR's in-order completion frees,
 * flushes or marks slots of @q (a refused post's claims undone, a flush,
 * a reclaim marker, a failed WR, a slot claimed outside the signal
 * policy): no run claimed or pending before it is reclaimed at once (see
 * ibpost_send_reclaim_before()). Any-order rings have no runs.
 */
static inline void ibpost_ring_run_break(struct ibpost_queue *q)
{
	lockdep_assert_held(&q->lock);
	q->run_gen++;
	/* Set, not or'ed in: no sum grows across refusals into the flag. */
	q->run_hits = IBPOST_RUN_BROKEN;
}

/* The slots of @q's ring its reserve leaves to posts (frwr.c). */
static inline u32 ibpost_queue_room(const struct ibpost_queue *q)
{
	return q->depth - q->reserved;
}

static inline struct ibpost_slot *ibpost_slot_claim(struct ibpost_queue *q,
						    void *context,
						    bool signaled,
						    bool user_signaled)
{
	return __ibpost_slot_claim(q, context, signaled, user_signaled, false);
}

/* The use array of @slot, a slot of @q's ring. */
static inline struct ibpost_ring_use **
ibpost_slot_uses(const struct ibpost_queue *q, const struct ibpost_slot *slot)
{
	return &q->use_array[(size_t)(slot - q->slots) * q->max_sge];
}

/* The DMA array of @slot, a slot of @q's ring. */
static inline struct ibpost_ring_dma *
ibpost_slot_dma(const struct ibpost_queue *q, const struct ibpost_slot *slot)
{
	return &q->dma_array[(size_t)(slot - q->slots) * q->max_sge];
}

/*
 * A queue's hit: while SGEs of posted WRs are counted in @q->hit_users,
 * the queue holds one user of @q->hit for them all, so a further SGE in
 * it is counted under @q->lock with no atomic operation or barrier, and
 * the owner sees that user as it would see each WR's. The hit changes
 * only when none of its SGEs is outstanding: an SGE elsewhere meanwhile
 * counts a user of its own, listed in its slot's use array. So an SGE
 * counted in hit_users is always in the hit of its release.
 *
 * ibpost_ring_hit_adopt(): @use, with a user counted for the SGE at hand,
 * becomes @q's hit when the old one has no SGE outstanding; that user
 * becomes the queue's and the SGE is counted in the hit.
 */
static inline void ibpost_ring_hit_adopt(struct ibpost_queue *q,
					 struct ibpost_ring_use *use)
{
	lockdep_assert_held(&q->lock);
	if (q->hit_users)
		return;
	q->hit = use;
	q->hit_users = 1;
}

/*
 * ibpost_ring_uses_put()'s common case: @nuse 0, the @nhit SGEs in a hit
 * that keeps other users. Return: whether it was that, and is done.
 */
static inline bool ibpost_ring_uses_put_hit(struct ibpost_queue *q,
					    unsigned int nuse,
					    unsigned int nhit)
{
	lockdep_assert_held(&q->lock);
	if (likely(!nuse && nhit < q->hit_users)) {
		q->hit_users -= nhit;
		return true;
	}
	return false;
}

void __ibpost_ring_uses_put(struct ibpost_queue *q,
			    struct ibpost_ring_use **uses,
			    unsigned int nuse, unsigned int nhit);

/*
 * Release a WR's uses: @nuse listed in @uses, @nhit in @q's hit. The
 * common case (above) without a call.
 */
static inline void ibpost_ring_uses_put(struct ibpost_queue *q,
					struct ibpost_ring_use **uses,
					unsigned int nuse, unsigned int nhit)
{
	if (!ibpost_ring_uses_put_hit(q, nuse, nhit))
		__ibpost_ring_uses_put(q, uses, nuse, nhit);
}

#ifdef IBPOST_TEST_HOOKS
/* A send slot's opcode, kept for the test accessor only. */
static inline void ibpost_slot_set_opcode(struct ibpost_slot *slot,
					  enum ib_wr_opcode opcode)
{
	slot->opcode = opcode;
}

/*
 * Which copy of the post loop a post call ran (@one: the one-WR copy),
 * counted for the suites: tracing, hooks and fault injection must not
 * change it.
 */
static inline void ibpost_queue_count_post(struct ibpost_queue *q, bool one)
{
	lockdep_assert_held(&q->lock);
	q->test_posts[!one]++;
}

/* A run of unsignaled WRs reclaimed at once, counted for the suites. */
static inline void ibpost_queue_count_run_reclaim(struct ibpost_queue *q)
{
	lockdep_assert_held(&q->lock);
	q->test_run_reclaims++;
}

/* A completion taken on the handlers' common path, counted for the suites. */
static inline void ibpost_queue_count_comp_common(struct ibpost_queue *q)
{
	lockdep_assert_held(&q->lock);
	q->test_comp_common++;
}
#else
static inline void ibpost_slot_set_opcode(struct ibpost_slot *slot,
					  enum ib_wr_opcode opcode)
{
}

static inline void ibpost_queue_count_post(struct ibpost_queue *q, bool one)
{
}

static inline void ibpost_queue_count_run_reclaim(struct ibpost_queue *q)
{
}

static inline void ibpost_queue_count_comp_common(struct ibpost_queue *q)
{
}
#endif

/*
 * Whether @q's WRs go to the flush worker rather than the provider: the
 * QP is in ERR, or, for the send queue, in SQE (a UD QP's send error).
 */
static inline bool ibpost_ring_state_flushing(enum ib_qp_state state,
					      bool send)
{
	return state == IB_QPS_ERR || (state == IB_QPS_SQE && send);
}

static inline bool ibpost_ring_flushing(const struct ibpost_queue *q)
{
	return ibpost_ring_state_flushing(READ_ONCE(q->rqp->state),
					  q->is_send);
}

/* ring.c */
void ibpost_queue_init(struct ibpost_queue *q, struct ibpost_qp *qp,
		       struct ibpost_ring_qp *rqp, bool is_send,
		       void (*done_fn)(struct ibpost_qp *qp, void *context,
				       const struct ib_wc *wc));
void ibpost_queue_slots_init(struct ibpost_queue *q);
int ibpost_ring_alloc(struct ibpost_queue *q, u32 depth, u32 max_sge);
void ibpost_ring_free(struct ibpost_queue *q);
void *ibpost_zalloc_exact(size_t size);
void ibpost_free_exact(void *p, size_t size);
void ibpost_sync_put(struct ibpost_sync *sync);
u32 ibpost_queue_finish_synthetic(struct ibpost_queue *q, u32 budget);
bool ibpost_queue_take_done(struct ibpost_queue *q, struct ibpost_comp *comp);
void ibpost_slot_unclaim(struct ibpost_queue *q, u32 count);
struct ibpost_slot *ibpost_ring_claim_deferred(struct ibpost_queue *q,
					       void *context,
					       struct ibpost_sync *sync);
void ibpost_ring_release_deferred(struct ibpost_queue *q,
				  struct ibpost_slot *slot);
void ibpost_queue_flush(struct ibpost_queue *q, bool drained, bool drop_done);
void ibpost_ring_reclaim_retired(struct ibpost_queue *q);
bool ibpost_ring_reclaim_block(struct ibpost_queue *q);
void ibpost_ring_reclaim_unblock(struct ibpost_queue *q, bool mine,
				 bool reset);
void ibpost_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void ibpost_ring_uses_drop(struct ibpost_ring_use **uses, unsigned int n);
void ibpost_ring_hit_put(struct ibpost_queue *q, unsigned int n);
struct ibpost_ring_use *ibpost_ring_hit_pin(struct ibpost_queue *q);

/* comp.c */
void ibpost_queue_release_done(struct ibpost_queue *q);
int ibpost_cq_poll(struct ib_cq *cq, int budget);
bool ibpost_qp_poll_direct(struct ibpost_qp *qp, struct ibpost_queue *q);
void ibpost_flush_work(struct work_struct *work);

#endif /* _IBPOST_RING_H */
