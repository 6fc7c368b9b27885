/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost's base layer: the locking rules, the module's work queue, the
 * rules a post checks, the test hooks and fault injection. Every other
 * layer builds on it; it names none of their types.
 */
#ifndef _IBPOST_BASE_H
#define _IBPOST_BASE_H

#include <linux/compiler.h>
#include <linux/irqflags.h>
#include <linux/sched.h>
#include <linux/fault-inject.h>
#include <linux/workqueue.h>
#include "hook.h"

struct dentry;

/*
 * Locking. The locks, outermost first: each is taken only under locks
 * above it in this list, never under one below it.
 *
 *   a client's lock              mutex (client.c, one per registered
 *                                client, one lockdep class: two are
 *                                never held together): held across
 *                                that client's callbacks
 *   ibpost_clients_lock          mutex (client.c): the client list,
 *                                device listing, the devices' debugfs
 *                                directories; never across a callback
 *   qp->mutex                    mutex: one QP's state changes, teardown
 *                                and DIRECT polling; one lockdep class,
 *                                taken at the subclass of the task's
 *                                nesting (ibpost_qp_lock(), qp_core.h)
 *   dev->qp_lock                 mutex: dev->qps, the device's provider
 *                                objects, releasing its MRs
 *   qp->rw.sem                   rw_semaphore (rwop.c): read by a READ/
 *                                WRITE post around ib_core's context
 *                                set-up, written by the teardown before
 *                                the provider's QP goes
 *   q->lock (qp->sq, qp->rq)     spinlock: one work queue's ring; taken
 *                                with interrupts off by the post path
 *                                (see post.c) and by whatever completes
 *                                a slot (see ring.c), in any context,
 *                                and by everything else too: one
 *                                discipline; never in hard IRQ context
 *   dev->mr_lock                 spinlock, bottom halves off: dev->mrs and its
 *                                index (mr_table.c)
 *
 * Three leaves, under which no other lock is taken:
 *
 *   ibpost_dev_lock (dev.c)      spinlock, interrupts off: the device
 *                                list and names, for lookups from any
 *                                context and the debugfs "devices" file
 *   ibpost_cm_lock (cm.c)        spinlock: ibpost_cm_qps and the cm_ids'
 *                                event handlers
 *   ibpost_fault_lock (fault.c)  spinlock, interrupts off: should_fail()
 *                                on the fault attribute, taken under
 *                                q->lock by the post path while armed
 *
 * The nestings the code has:
 *
 *   ibpost_clients_lock -> ibpost_dev_lock   device add, remove
 *   ibpost_clients_lock -> dev->qp_lock      removal's debugfs removal
 *   a client's lock -> qp->mutex and below: ibpost_client callbacks
 *                        may create, connect and destroy QPs, register
 *                        and deregister MRs, post
 *   qp->mutex -> dev->qp_lock    teardown; a DIRECT callback's dereg
 *   qp->mutex -> q->lock         state changes, teardown, flushes
 *   qp->mutex -> ibpost_cm_lock  ibpost_cm_destroy_qp()
 *   qp->mutex -> another QP's qp->mutex: ibpost_qp_connect_loopback()
 *                        (address order, the second one subclass
 *                        deeper); a callback under one QP's mutex
 *                        polling another, changing its state or
 *                        destroying it (a subclass deeper: its section's
 *                        depth). Two QPs whose callbacks wait for each
 *                        other's mutex deadlock, and lockdep cannot tell
 *                        (one class): a consumer's callbacks act on other
 *                        QPs in one order, or with ibpost_poll()
 *   dev->qp_lock -> q->lock        ibpost_dereg_mr(), debugfs "stats"
 *   dev->qp_lock -> dev->mr_lock   MR allocation, release, dereg
 *   dev->qp_lock -> ibpost_cm_lock ibpost_cm_attach() at QP creation
 *   q->lock -> dev->mr_lock        the post path's ibpost_mr_lookup()
 *                                  and __ibpost_mr_pin()
 *   qp->mutex -> qp->rw.sem        teardown; a DIRECT callback's
 *                                  READ/WRITE post
 *   qp->rw.sem -> q->lock          a READ/WRITE post
 *   q->lock -> ib_core's qp->mr_lock  rdma_rw_ctx_destroy() (its MR
 *                                  pool) as an operation ends
 *   qp->mutex -> srq->mutex        ibpost_srq_arm() from a DIRECT
 *                                  callback, a teardown's reap
 *   srq->mutex -> q->lock          an SRQ's teardown (its ring's lock)
 *
 * An SRQ's ring lock is a queue lock like a QP's. srq->mutex is a leaf
 * but for its ring's lock: held around the provider SRQ's destroy and
 * modify only, never around a callback (ibpost_srq_arm() may come from a
 * callback under a QP's mutex). The SRQ's own flushes run after it is
 * dropped; a callback of theirs that destroys or arms that SRQ is
 * refused (-EWOULDBLOCK).
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
 *   an SRQ's recv_done (or a context's cqe->done): as a receive callback
 *     of the QP that took the WR, run by that QP's CQ (or its teardown's
 *     reap, under its qp->mutex); the SRQ's own flushes at its teardown
 *     with no ibpost lock, bottom halves off for an IB_POLL_SOFTIRQ SRQ.
 *   consumer send_done/recv_done: never under q->lock, dev->qp_lock or
 *     dev->mr_lock (the slot is released first). From the CQ's own
 *     context (IB_POLL_SOFTIRQ: softirq; IB_POLL_WORKQUEUE and
 *     IB_POLL_UNBOUND_WORKQUEUE: ib_core's work item) with no ibpost
 *     lock; for IB_POLL_DIRECT, inside ibpost_poll() and ibpost's own
 *     waits (MR (de)registration, drain), under qp->mutex; from
 *     qp->rqp.flush_work with no lock, but never a DIRECT queue's (its WRs
 *     flushed in ERR come back through its consumer's polling, see
 *     ibpost_queue_direct_cb()); from ibpost_queue_flush() at teardown
 *     and RESET, under qp->mutex, and under the client's lock too when
 *     a consumer destroys a QP from its ibpost_client callback.
 *     An IB_POLL_SOFTIRQ queue's callbacks run with bottom halves off
 *     on every one of these paths, as in its CQ's softirq. A softirq
 *     callback may run on the stack of a task that holds dev->qp_lock
 *     (softirqs run at spin_unlock_bh()); it cannot sleep, so never
 *     waits for it.
 *   ibpost_client add/remove/event: process context, under that
 *     client's lock only. At remove the device is already marked
 *     IBPOST_DEV_REMOVING and unlisted, its QPs still up: they are torn
 *     down after every remove returned, without a client's lock.
 *   ibpost_cm_handler() (rdma_cm events): rdma_cm's process context,
 *     with the id's handler mutex held; takes ibpost_cm_lock, then,
 *     after dropping it, qp->mutex; calls the consumer's handler with
 *     neither held.
 *   CQ handlers: ibpost_send_done() and ibpost_recv_done() take q->lock
 *     with interrupts off and drop it before the consumer's callback;
 *     ibpost_marker_done() and ibpost_sink_reg_done() take no lock.
 *   qp->rqp.flush_work (ibpost_wq): no lock; waited for under qp->mutex by
 *     teardown and RESET, so its callbacks must not wait for that QP's
 *     qp->mutex (ibpost_qp_modify() refuses them, -EWOULDBLOCK).
 *   qp->sinks.work (ibpost_wq): takes q->lock; flushed under qp->mutex at
 *     teardown.
 *   qp->rw.revoke_work (ibpost_wq): replaces a failed READ/WRITE
 *     operation's MRs (sleeps), takes q->lock; flushed under qp->mutex at
 *     RESET and teardown.
 *   mr->release_work (ibpost_wq): takes dev->qp_lock, then
 *     dev->mr_lock.
 *   qp->event_work (ibpost_event_wq, a queue of its own: it takes
 *     qp->mutex, under which teardown flushes ibpost_wq's items):
 *     takes qp->mutex, and under it the cm_id's restrack entry; calls
 *     the consumer's event callback with neither. Destroy cancels it
 *     (cancel_work_sync()) after the teardown, without qp->mutex.
 *   A device's event handler (client.c, ibpost_dev_event()): ib_core's
 *     event work, its event_handler_rwsem held for read (taken under
 *     rtnl_mutex elsewhere); takes ibpost_events_lock (a leaf) to queue
 *     the event for ibpost_events_work (ibpost_event_wq), which copies it
 *     onto each client's queue (ibpost_clients_lock for the walk, the
 *     client's events_lock, a leaf); each client's event_work tells it
 *     under that client's lock.
 *   The QP's event handler (ibpost_qp_event()): any context, the
 *     provider's locks held; takes no lock, queues qp->event_work.
 *
 * ibpost_wq is WQ_MEM_RECLAIM: a ULP may destroy a QP from a reclaim
 * work item of its own, and the destroy flushes these work items.
 */

/* main.c */
extern struct workqueue_struct *ibpost_wq;
extern struct workqueue_struct *ibpost_event_wq;

/*
 * The rules a post checks a WR against, named by the refusal trace events
 * (ibpost_post_send_err, ibpost_post_recv_err); ring_trace.h lists
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
	IBPOST_RULE_NOT_A_CQE,		/* ib_cqe mode: no ib_cqe, no done */
	IBPOST_RULE_SRQ_QP,		/* receives of an SRQ's QP: to the SRQ */
	IBPOST_RULE_DMA_DIRECTION,	/* an MR mapped the other way */
};

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

#endif /* _IBPOST_BASE_H */
