// SPDX-License-Identifier: GPL-2.0
/*
 * The QP object below the layers that post to it, complete it, drain it
 * and connect it: ibpost's view of its state, its last reference, and
 * the address of its own port. Its creation, teardown and the API calls
 * that change its state are qp.c's, above them all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debug_locks.h>
#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include "ibpost_cq.h"
#include "qp_core.h"
#include "ibpost_trace.h"

/*
 * Wait out the post calls in flight on the receive queue: after a write
 * made under the send queue's lock, each post path reads it under its own.
 */
void ibpost_rq_barrier(struct ibpost_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->rq.lock, flags);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

/*
 * Record a state the QP was moved to, under both queue locks in turn;
 * with @any false only if ibpost's view is still @from. That test and the
 * write are one cmpxchg(): a failed WR's completion writes ERR under its
 * own queue's lock (ring.c), which may be the receive queue's, and must
 * not be lost to a move from @from decided before it.
 */
static void ibpost_state_move(struct ibpost_qp *qp, bool any,
			      enum ib_qp_state from, enum ib_qp_state to)
{
	enum ib_qp_state old;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	if (!any)
		ibpost_hook(IBPOST_HOOK_STATE_FROM, qp);
	if (any)
		old = xchg(&qp->rqp.state, to);
	else
		old = cmpxchg(&qp->rqp.state, from, to);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (!any && old != from)
		return;
	ibpost_rq_barrier(qp);
	if (old != to)
		trace_ibpost_qp_state(qp, old, to);
}

void ibpost_set_state(struct ibpost_qp *qp, enum ib_qp_state state)
{
	ibpost_state_move(qp, true, state, state);
}

/* Move ibpost's view of @qp's state from @from to @to, if still @from. */
void ibpost_set_state_from(struct ibpost_qp *qp, enum ib_qp_state from,
			   enum ib_qp_state to)
{
	ibpost_state_move(qp, false, from, to);
}

void ibpost_seed_free(struct ibpost_seed_scratch *seed)
{
	kvfree(seed->mrs);
	seed->mrs = NULL;
	seed->sge = NULL;
}

/* Undo ibpost_qp_alloc_rings(). */
void ibpost_qp_free_rings(struct ibpost_qp *qp)
{
	ibpost_seed_free(&qp->seed[1]);
	ibpost_seed_free(&qp->seed[0]);
	ibpost_ring_free(&qp->rq);
	ibpost_ring_free(&qp->sq);
	ibpost_frwr_pool_free(qp);
}

/* Undo ibpost_qp_alloc(). */
void ibpost_qp_free(struct ibpost_qp *qp)
{
	if (qp->vec_counted)
		ibpost_dev_vector_put(qp->dev, qp->attr.comp_vector);
	mutex_destroy(&qp->mutex);
	kfree(qp);
}

#ifdef CONFIG_LOCKDEP
/*
 * One marker per depth of polling section, which lockdep holds but does
 * not validate (acquired with check 0): a held marker records no
 * dependency, so what a section takes is ordered after the QP's mutex,
 * as it would be without the marker.
 */
static struct lock_class_key ibpost_qp_poll_keys[IBPOST_QP_NEST_MAX + 1];
#define IBPOST_QP_POLL_MAP(n) \
	STATIC_LOCKDEP_MAP_INIT("ibpost_qp_poll" #n, &ibpost_qp_poll_keys[n])
static struct lockdep_map ibpost_qp_poll_maps[IBPOST_QP_NEST_MAX + 1] = {
	IBPOST_QP_POLL_MAP(0), IBPOST_QP_POLL_MAP(1), IBPOST_QP_POLL_MAP(2),
	IBPOST_QP_POLL_MAP(3), IBPOST_QP_POLL_MAP(4), IBPOST_QP_POLL_MAP(5),
};

/**
 * ibpost_qp_nesting - the lockdep subclass of a QP mutex taken now
 *
 * Return: the number of polling sections the current task is in (each
 * holds its depth's marker), at most IBPOST_QP_NEST_MAX: a deeper
 * nesting, which no consumer should build, is said once (lockdep may
 * then take it for recursion); 0 once lockdep is off.
 *
 * Context: Process context.
 */
unsigned int ibpost_qp_nesting(void)
{
	unsigned int d = 0;

	/* Lockdep off (it reported): lock_is_held() no longer knows. */
	if (!debug_locks)
		return 0;
	while (d < IBPOST_QP_NEST_MAX && lock_is_held(&ibpost_qp_poll_maps[d]))
		d++;
	if (d == IBPOST_QP_NEST_MAX && lock_is_held(&ibpost_qp_poll_maps[d]))
		pr_warn_once("QP callbacks nested more than %d deep: lockdep may take the next QP mutex for one held\n",
			     IBPOST_QP_NEST_MAX);
	return d;
}

/**
 * ibpost_qp_poll_enter - the current task becomes @qp's poller
 * @qp: a QP whose mutex the task holds
 *
 * Marks the section with its depth's marker, taken after the mutex.
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_qp_poll_enter(struct ibpost_qp *qp)
{
	lockdep_assert_held(&qp->mutex);
	qp->poll_depth = ibpost_qp_nesting();
	/* Exclusive, no trylock, not read, not checked (see above). */
	lock_acquire(&ibpost_qp_poll_maps[qp->poll_depth], 0, 0, 0, 0, NULL,
		     _THIS_IP_);
}

/**
 * ibpost_qp_poll_exit - end ibpost_qp_poll_enter()'s section
 * @qp: the QP
 *
 * Context: Process context, qp->mutex held.
 */
void ibpost_qp_poll_exit(struct ibpost_qp *qp)
{
	lock_release(&ibpost_qp_poll_maps[qp->poll_depth], _THIS_IP_);
}
#endif

/* Free a QP whose last reference is gone (its teardown is over). */
void ibpost_qp_put(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev;

	if (!refcount_dec_and_test(&qp->ref))
		return;
	dev = qp->dev;
	/* Kept for late completions on its shared CQs (qp.c): see there. */
	if (!qp->kept) {
		ibpost_qp_free_rings(qp);
		ibpost_qp_free(qp);
	} else if (qp->vec_counted) {
		ibpost_dev_vector_put(dev, qp->attr.comp_vector);
		qp->vec_counted = false;
	}
	ibpost_dev_put(dev);
}

/* Fill an address vector that loops back to @qp's own port. */
int ibpost_loopback_av(struct ibpost_qp *qp, struct rdma_ah_attr *ah)
{
	struct ib_device *ibdev = qp->dev->ibdev;
	const struct ib_gid_attr *sgid = ERR_PTR(-EADDRNOTAVAIL);
	struct net_device *ndev;
	struct ib_port_attr pattr;
	union ib_gid gid;
	unsigned int i;
	int ret;

	memset(ah, 0, sizeof(*ah));
	ah->type = rdma_ah_find_type(ibdev, qp->port);
	rdma_ah_set_port_num(ah, qp->port);
	if (!rdma_protocol_roce(ibdev, qp->port)) {
		ret = ib_query_port(ibdev, qp->port, &pattr);
		if (ret)
			return ret;
		rdma_ah_set_dlid(ah, pattr.lid);
		return 0;
	}

	/* RoCE: the first usable GID of the port, and its netdev's MAC. */
	for (i = 0; i < ibdev->port_data[qp->port].immutable.gid_tbl_len; i++) {
		sgid = rdma_get_gid_attr(ibdev, qp->port, i);
		if (!IS_ERR(sgid) &&
		    ibpost_hook(IBPOST_HOOK_GID, (void *)sgid)) {
			rdma_put_gid_attr(sgid);
			sgid = ERR_PTR(-EADDRNOTAVAIL);
		}
		if (!IS_ERR(sgid))
			break;
	}
	if (IS_ERR(sgid))
		return -EADDRNOTAVAIL;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid);
	if (IS_ERR(ndev)) {
		rcu_read_unlock();
		rdma_put_gid_attr(sgid);
		return PTR_ERR(ndev);
	}
	/*
	 * The core resolves roce.dmac only for userspace: a kernel caller
	 * must hand it in, or rxe sends loopback traffic out of the netdev.
	 */
	ether_addr_copy(ah->roce.dmac, ndev->dev_addr);
	rcu_read_unlock();
	gid = sgid->gid;
	rdma_ah_set_grh(ah, &gid, 0, sgid->index, 1, 0);
	rdma_put_gid_attr(sgid);
	return 0;
}

/*
 * Whether the current task may be inside one of @qp's completion callbacks
 * where a wait for @qp would never end: in a bottom half or with bottom
 * halves off (a SOFTIRQ CQ's, which may not sleep at all), in the work item of one of its CQs
 * (WORKQUEUE: ib_free_cq() and a drain wait for it), in ibpost's flush
 * worker (teardown and RESET wait for it), or in a call that polls @qp
 * (qp->poller: a DIRECT consumer's, a RESET's or a teardown's, which hold
 * qp->mutex) or runs its release callbacks, when @polled. Only addresses
 * are compared: a CQ freed meanwhile is not read.
 */
bool ibpost_qp_in_callback(struct ibpost_qp *qp, bool polled)
{
	struct work_struct *work;

	if (ibpost_cannot_sleep())
		return true;
	if (polled && (ibpost_qp_polled_by_current(qp) ||
		       READ_ONCE(qp->releasing) == current))
		return true;
	work = current_work();
	if (!work)
		return false;
	return work == &qp->rqp.flush_work ||
	       ibpost_cq_runs_work(READ_ONCE(qp->sq.cq), work) ||
	       ibpost_cq_runs_work(READ_ONCE(qp->rq.cq), work);
}
