/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QP object: a QP with its two work queues (struct ibpost_qp), its
 * state checks, state moves and last reference (qp_core.c), below the
 * files that post to it, complete it, drain it and connect it. Its
 * creation and teardown are qp.h's.
 */
#ifndef _IBPOST_QP_CORE_H
#define _IBPOST_QP_CORE_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>
#include <rdma/ibpost.h>
#include "dev.h"
#include "frwr.h"
#include "rwop.h"
#include "sink.h"

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
 * struct ibpost_seed_scratch - where a queue's vector seed operations
 *                              build their WR (seed.c)
 * @lock: serializes them; taken with interrupts disabled, before the
 *        queue's lock
 * @sge: the queue's max_sge SGEs
 * @mrs: their MRs
 */
struct ibpost_seed_scratch {
	spinlock_t lock;	/* see the kernel-doc above */
	struct ib_sge *sge;
	struct ibpost_mr **mrs;
};

/**
 * struct ibpost_qp - a QP with its CQs and accounting
 * @ref: the consumer's reference, and one per user that must not see the
 *       struct freed under it (device removal, a cm event, an MR's
 *       invalidation); the last ibpost_qp_put() frees it
 * @mutex: serializes state changes, teardown and DIRECT polling of this
 *         QP; consumer callbacks may run under it (DIRECT polling, flushes);
 *         taken with ibpost_qp_lock() (its lockdep subclass)
 * @poller: the task polling this QP's DIRECT CQs, or running its
 *          callbacks at teardown or RESET, under @mutex, so that a
 *          callback's own wait or state change does not take @mutex again
 * @poll_depth: while @poller is set, its nesting (ibpost_qp_poll_enter())
 * @releasing: the task running ibpost_qp_destroy()'s release calls
 * @removal_seen: device removal has torn this QP down (or found it torn
 *                down); under dev->qp_lock
 * @dev: the device (holds a reference)
 * @rqp: what the rings know of the QP: its provider QP (NULL once torn
 *       down), number and state (see struct ibpost_ring_qp)
 * @attr: the attributes, with the capacities the provider granted
 * @node: entry in dev->qps
 * @sq: the send queue
 * @rq: the receive queue
 * @sinks: iWARP: the send queue's READ sinks (see sink.c); else none
 * @frwr: the fast-registration pool (frwr.c); empty without frwr_maps
 * @rw: its RDMA READ/WRITE operations of sg lists (rwop.c)
 * @seed: the vector seed operations' scratch, [0] send, [1] receive
 * @events: IB_EVENT_* bits the provider reported, not yet handled by
 *          @event_work (qp_event.c)
 * @event_work: handles @events in process context, with a reference
 * @events_off: destroyed: @event_work no longer calls the consumer
 * @vec_counted: its CQs' vector (attr.comp_vector) is counted on @dev
 * @left_reset: the QP was moved out of RESET at least once
 * @drained: the teardown's drain returned every posted WR (under @mutex)
 * @cqs_left: the provider's QP is destroyed, its CQs are not yet freed
 *            (device removal's first half, ibpost_qp_teardown_start());
 *            under @mutex
 * @cqs_quiet: a device removal waited until nothing polls those CQs;
 *             under dev->qp_lock
 * @cqs_claimed: a teardown frees those CQs, the removal's wait no longer
 *               reads them; under dev->qp_lock
 * @cq_share: attr.shared_cq: the entries taken of each pool CQ ([0] send,
 *            [1] receive), given back by ib_cq_pool_put()
 * @drain_failed: a drain of the QP (RESET, teardown) ever timed out or
 *                could not start: a marker's completion may still come
 * @kept: the drain did not return every WR of a QP on shared CQs: its
 *        late completions may still come on them, so the QP's memory is
 *        never freed
 * @removal_node: entry in a device removal's list of QPs whose CQs it
 *                left (that removal's own)
 * @ord: RC: the READs and atomics it may have outstanding as initiator
 *       (its max_rd_atomic, or on iWARP the ORD its connection
 *       negotiated); 0 refuses them at post, where a provider would
 *       stall them (rxe) or fail its send queue after queuing them (siw).
 *       Set before the state that allows sends
 * @send_fast: the send opcodes a post checks through a table, filled at
 *             creation (ibpost_send_fast_init())
 * @send_fast_inline: of those, the ones (a bit each) whose WR with inline
 *                    data is checked through the table too
 * @port: the port the QP is bound to
 * @debugfs: this QP's debugfs file, or NULL
 * @drain_ah: UD only: an address handle for the send queue's drain marker
 * @sq_marker: the drain marker of the send queue
 * @rq_marker: the drain marker of the receive queue
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
	struct task_struct *poller;
	u8 poll_depth;
	struct task_struct *releasing;
	bool removal_seen;
	struct ibpost_dev *dev;
	struct ibpost_ring_qp rqp;
	struct ibpost_qp_attr attr;
	struct list_head node;
	struct ibpost_queue sq;
	struct ibpost_queue rq;
	struct ibpost_sinks sinks;
	struct ibpost_frwr_pool frwr;
	struct ibpost_rw rw;
	struct ibpost_seed_scratch seed[2];
	unsigned long events;
	struct work_struct event_work;
	bool events_off;
	bool vec_counted;
	bool left_reset;
	bool drained;
	bool cqs_left;
	bool cqs_quiet;
	bool cqs_claimed;
	u32 cq_share[2];
	bool drain_failed;
	bool kept;
	struct list_head removal_node;
	u8 ord;
	struct ibpost_send_fast send_fast[IBPOST_FAST_OPS];
	u16 send_fast_inline;
	u32 port;
	struct dentry *debugfs;
	struct ib_ah *drain_ah;
	struct ibpost_marker sq_marker;
	struct ibpost_marker rq_marker;
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
	return ibpost_queue_calls_back(q) && q->rqp->poll_ctx == IB_POLL_DIRECT;
}

/*
 * Whether the current task may not sleep: in a bottom half, or with
 * bottom halves or interrupts off (in_task() alone does not say so:
 * ibpost's flush worker and a RESET's flush run a SOFTIRQ QP's callbacks
 * with bottom halves off, as its CQ would).
 */
static inline bool ibpost_cannot_sleep(void)
{
	return !in_task() || softirq_count() || irqs_disabled();
}

/*
 * Whether the current task polls @qp (a DIRECT consumer's poll, a RESET's
 * or a teardown's flush, all under qp->mutex) and runs this from one of
 * the callbacks of that poll: qp->mutex is then held already, and taking
 * it again would wait for itself. Not a bottom half run on the poller's
 * own stack (at its local_bh_enable() or an interrupt's exit), nor a
 * callback run with bottom halves off: those may not sleep, so may not
 * act as the poller either.
 */
static inline bool ibpost_qp_polled_by_current(struct ibpost_qp *qp)
{
	return !ibpost_cannot_sleep() && READ_ONCE(qp->poller) == current;
}

/*
 * QP mutexes and lockdep. Every QP's mutex is of one class. A consumer
 * callback that runs under one QP's mutex (its poller's: DIRECT polling,
 * teardown, RESET) may take another QP's, to poll it, change its state
 * or destroy it: lockdep must see that as nesting, not as the task taking
 * a lock it holds. So a QP's mutex is taken with the subclass of the
 * current task's depth of polling sections (IBPOST_QP_NEST_MAX at most;
 * none outside a callback: 0), each section marked by a lockdep map of
 * its depth (ibpost_qp_poll_enter()/_exit()); connect_loopback's second
 * QP one deeper than its first; the event work its own
 * (IBPOST_QP_EVENT_SUBCLASS). What lockdep no longer tells: two QPs whose
 * callbacks each wait for the other's mutex (the lock table's rule).
 */
#define IBPOST_QP_NEST_MAX	5
#define IBPOST_QP_EVENT_SUBCLASS	(IBPOST_QP_NEST_MAX + 2)

#ifdef CONFIG_LOCKDEP
unsigned int ibpost_qp_nesting(void);
void ibpost_qp_poll_enter(struct ibpost_qp *qp);
void ibpost_qp_poll_exit(struct ibpost_qp *qp);
#else
static inline unsigned int ibpost_qp_nesting(void)
{
	return 0;
}

static inline void ibpost_qp_poll_enter(struct ibpost_qp *qp)
{
}

static inline void ibpost_qp_poll_exit(struct ibpost_qp *qp)
{
}
#endif

/* Take @qp's mutex at the current task's nesting (see above). */
static inline void ibpost_qp_lock(struct ibpost_qp *qp)
{
	mutex_lock_nested(&qp->mutex, ibpost_qp_nesting());
}

/*
 * The current task, holding qp->mutex, becomes @qp's poller: the
 * callbacks it runs from here on are its polling (see
 * ibpost_qp_polled_by_current()), in a polling section of their own
 * unless the task polls @qp already. Return: the poller it replaces, for
 * ibpost_qp_poller_give().
 */
static inline struct task_struct *ibpost_qp_poller_take(struct ibpost_qp *qp)
{
	struct task_struct *was = READ_ONCE(qp->poller);

	lockdep_assert_held(&qp->mutex);
	WRITE_ONCE(qp->poller, current);
	if (was != current)
		ibpost_qp_poll_enter(qp);
	return was;
}

/* Undo ibpost_qp_poller_take(), which returned @was. */
static inline void ibpost_qp_poller_give(struct ibpost_qp *qp,
					 struct task_struct *was)
{
	if (was != current)
		ibpost_qp_poll_exit(qp);
	WRITE_ONCE(qp->poller, was);
}

/* qp_core.c */
void ibpost_qp_put(struct ibpost_qp *qp);
void ibpost_rq_barrier(struct ibpost_qp *qp);
void ibpost_qp_free(struct ibpost_qp *qp);
void ibpost_qp_free_rings(struct ibpost_qp *qp);
void ibpost_seed_free(struct ibpost_seed_scratch *seed);
void ibpost_set_state(struct ibpost_qp *qp, enum ib_qp_state state);
void ibpost_set_state_from(struct ibpost_qp *qp, enum ib_qp_state from,
			   enum ib_qp_state to);
int ibpost_loopback_av(struct ibpost_qp *qp, struct rdma_ah_attr *ah);
bool ibpost_qp_in_callback(struct ibpost_qp *qp, bool polled);

/*
 * The QP-level state check shared by both queues' posts, under the
 * queue's lock: 0, or why the QP takes no post.
 */
static inline int __ibpost_state_check(struct ibpost_qp *qp,
				       enum ib_qp_state state, bool send)
{
	if (unlikely(qp->rqp.dead ||
		     test_bit(IBPOST_DEV_REMOVING, &qp->dev->flags)))
		return -ENODEV;
	switch (state) {
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

/* The same, reading the state itself. */
static inline int ibpost_state_check(struct ibpost_qp *qp, bool send)
{
	return __ibpost_state_check(qp, READ_ONCE(qp->rqp.state), send);
}

/* debugfs.c */
void ibpost_debugfs_init(void);
void ibpost_debugfs_exit(void);
void ibpost_debugfs_add_dev(struct ibpost_dev *dev);
void ibpost_debugfs_rename_dev(struct ibpost_dev *dev, const char *name);
void ibpost_debugfs_remove_dev(struct ibpost_dev *dev);
void ibpost_debugfs_add_qp(struct ibpost_qp *qp);
void ibpost_debugfs_remove_qp(struct ibpost_qp *qp);

#endif /* _IBPOST_QP_CORE_H */
