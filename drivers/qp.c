// SPDX-License-Identifier: GPL-2.0
/*
 * QP lifecycle: create (with a send CQ and a receive CQ), loopback
 * connect, drain and destroy.
 *
 * Capacities: each work queue is created one entry deeper than asked, and
 * that spare entry is never handed out, so ib_drain_qp() always finds
 * room for its marker WR. What the consumer sees (ibpost_qp_get_attr())
 * is what the provider really granted, queried back, as far as the
 * queue's CQ holds it, minus that spare.
 *
 * Teardown: ibpost_qp_teardown() moves the QP to ERR, drains both queues
 * (every outstanding WR completes or flushes and its context is returned
 * through the normal completion path), then returns whatever the provider
 * did not complete as a flush, and destroys the QP and its CQs. It runs
 * once, from ibpost_qp_destroy() or from device removal, whichever comes
 * first; a removal of an IB or RoCE device runs it in two halves, every
 * provider QP first and then, after one wait for all their CQs, the CQs
 * and the flush (see removal.c). Each half runs under qp->mutex only:
 * completion callbacks run meanwhile and may call back into ibpost
 * (ibpost_dereg_mr() takes dev->qp_lock). The QP
 * stays on dev->qps until its teardown is over, so device removal waits
 * for a destroy in progress before it frees the PD.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>
#include "ibpost_cq.h"
#include "qp.h"
#include "post.h"
#include "mr_table.h"
#include "ibpost_rc.h"
#include "ibpost_trace.h"
#include "srq.h"

static unsigned int default_signal_interval = 16;
module_param(default_signal_interval, uint, 0644);
MODULE_PARM_DESC(default_signal_interval,
		 "Signal interval of QPs created with signal_interval 0: a send WR is signaled at least this often (default 16)");

static u32 ibpost_pick_port(struct ib_device *ibdev)
{
	struct ib_port_attr pattr;
	u32 port;

	rdma_for_each_port(ibdev, port)
		if (!ib_query_port(ibdev, port, &pattr) &&
		    pattr.state == IB_PORT_ACTIVE)
			return port;
	return rdma_start_port(ibdev);
}

static int ibpost_qp_to_rts_ud(struct ibpost_qp *qp)
{
	struct ib_qp_attr qa = {};
	int ret;

	qa.qp_state = IB_QPS_INIT;
	qa.pkey_index = 0;
	qa.port_num = qp->port;
	qa.qkey = qp->attr.qkey;
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	qp->left_reset = true;
	qp->rqp.state = IB_QPS_INIT;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE);
	if (ret)
		return ret;
	qa.qp_state = IB_QPS_RTS;
	qa.sq_psn = 0;
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE | IB_QP_SQ_PSN);
	if (!ret)
		qp->rqp.state = IB_QPS_RTS;
	return ret;
}

/*
 * Provider send WRs the QP is created with: one per slot and the drain
 * marker; on iWARP two per slot (a READ and its sink's REG_MR, sink.c),
 * and the send CQ holds a completion for each when they flush. The ring
 * holds the consumer's WRs and two per fast-registration entry (frwr.c):
 * its REG_MR and its LOCAL_INV, the latter kept in reserve.
 */
static u32 ibpost_qp_sq_wrs(const struct ibpost_qp *qp)
{
	u32 depth = qp->attr.max_send_wr + 2 * qp->attr.frwr_maps;
	u32 sq_wrs = depth + 1;

	if (ibpost_dev_iwarp(qp->dev))
		sq_wrs = min_t(u32, sq_wrs + depth,
			       max_t(int, qp->dev->ibdev->attrs.max_qp_wr, 3));
	return sq_wrs;
}

static int ibpost_qp_query_caps(struct ibpost_qp *qp)
{
	/*
	 * The entries each CQ holds: what it was created with at least (a
	 * provider may round up, or, as ocrdma, leave cqe unset); of a
	 * shared CQ, the QP's share.
	 */
	u32 scq = max_t(u32, qp->sq.cq->cqe, ibpost_qp_sq_wrs(qp));
	u32 rcq = max_t(u32, qp->rq.cq->cqe, qp->attr.max_recv_wr + 1);
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr qa;
	int ret;

	if (qp->attr.shared_cq) {
		scq = qp->cq_share[0];
		rcq = qp->cq_share[1];
	}

	ret = ib_query_qp(qp->rqp.ibqp, &qa, IB_QP_CAP, &init);
	if (ret)
		return ret;
	/*
	 * One entry of each queue is kept back for ib_drain_qp(). Each CQ
	 * holds a completion for every WR of its queue and the marker: a
	 * provider that rounds a queue up further than its CQ (rxe and siw
	 * round both alike) gets no more WRs than the CQ can complete.
	 */
	if (init.cap.max_send_wr < 2 ||
	    (init.cap.max_recv_wr < 2 && !qp->attr.srq))
		return -EINVAL;
	qp->attr.max_send_wr = min(init.cap.max_send_wr, scq) - 1;
	/*
	 * iWARP: two provider WRs per slot, for a READ's sink (sink.c), and
	 * as many send completions when they flush.
	 */
	if (ibpost_dev_iwarp(qp->dev))
		qp->attr.max_send_wr /= 2;
	/* The fast-registration pool's share (ibpost_qp_sq_wrs()). */
	if (qp->attr.frwr_maps) {
		if (qp->attr.max_send_wr <= 2 * qp->attr.frwr_maps)
			return -ENOMEM;
		qp->attr.max_send_wr -= 2 * qp->attr.frwr_maps;
	}
	/* Asked for at most U8_MAX (above): a provider may grant more. */
	qp->attr.max_send_sge = min_t(u32, init.cap.max_send_sge, U8_MAX);
	if (qp->attr.srq) {
		/* Its receives are the SRQ's. */
		qp->attr.max_recv_wr = 0;
		qp->attr.max_recv_sge = 0;
	} else {
		qp->attr.max_recv_wr = min(init.cap.max_recv_wr, rcq) - 1;
		qp->attr.max_recv_sge = min_t(u32, init.cap.max_recv_sge,
					      U8_MAX);
	}
	qp->attr.max_inline_data = init.cap.max_inline_data;
	ibpost_send_fast_init(qp);
	return 0;
}

/* Bytes of the vector seed operations' scratch of a queue of @max_sge. */
static size_t ibpost_seed_size(u32 max_sge)
{
	return (sizeof(struct ibpost_mr *) + sizeof(struct ib_sge)) * max_sge;
}

/* The scratch (struct ibpost_seed_scratch) of a queue of @max_sge. */
static int ibpost_seed_alloc(struct ibpost_seed_scratch *seed, u32 max_sge)
{
	spin_lock_init(&seed->lock);
	seed->mrs = kvzalloc(ibpost_seed_size(max_sge), GFP_KERNEL);
	if (!seed->mrs)
		return -ENOMEM;
	/* Pointers first, then the 8-byte aligned SGEs. */
	seed->sge = (struct ib_sge *)(seed->mrs + max_sge);
	return 0;
}

/* Refuse what ibpost cannot make before anything is allocated. */
static int ibpost_qp_attr_check(struct ibpost_dev *dev,
				const struct ibpost_qp_attr *attr)
{
	u32 pages;

	if (!dev || !attr)
		return -EINVAL;
	if (attr->qp_type != IB_QPT_RC && attr->qp_type != IB_QPT_UD) {
		pr_warn_ratelimited("qp_create: only RC and UD QPs are supported\n");
		return -EINVAL;
	}
	if (!attr->max_send_wr || (!attr->max_recv_wr && !attr->srq) ||
	    attr->max_send_wr >= U32_MAX / 2 || attr->max_recv_wr >= U32_MAX / 2 ||
	    attr->poll_ctx > IB_POLL_DIRECT) {
		pr_warn_ratelimited("qp_create: queue depths must be 1..2^31 and poll_ctx valid\n");
		return -EINVAL;
	}
	/*
	 * siw completes a WR posted in ERR ahead of the earlier WRs'
	 * flushes: a drained QP may still have completions to come on a CQ
	 * that outlives it.
	 */
	if (attr->shared_cq && ibpost_dev_iwarp(dev)) {
		pr_warn_ratelimited("qp_create: %s is an iWARP device: no shared CQs (its drain cannot prove a QP's last completion polled)\n",
				    dev->name);
		return -EOPNOTSUPP;
	}
	if (attr->srq && attr->shared_cq) {
		pr_warn_ratelimited("qp_create: no shared CQs for a QP on an SRQ (no receive drain marker can prove its last receive completion polled)\n");
		return -EOPNOTSUPP;
	}
	if (attr->shared_cq && attr->poll_ctx == IB_POLL_DIRECT) {
		pr_warn_ratelimited("qp_create: shared CQs are polled by ib_core, never IB_POLL_DIRECT\n");
		return -EINVAL;
	}
	if (attr->ib_cqe &&
	    (attr->send_done || attr->recv_done || attr->release)) {
		pr_warn_ratelimited("qp_create: ib_cqe mode completes through each context's cqe->done: send_done, recv_done and release must be NULL\n");
		return -EINVAL;
	}
	/* A slot counts its WR's MRs in bytes (struct ibpost_slot). */
	if (attr->max_send_sge > U8_MAX || attr->max_recv_sge > U8_MAX) {
		pr_warn_ratelimited("qp_create: at most %u SGEs per WR\n",
				    U8_MAX);
		return -EINVAL;
	}
	if (attr->comp_vector != IBPOST_COMP_VECTOR_ANY &&
	    (attr->comp_vector < 0 || attr->comp_vector >= dev->nr_vecs)) {
		pr_warn_ratelimited("qp_create: comp_vector %d: %s has %u completion vectors\n",
				    attr->comp_vector, dev->name, dev->nr_vecs);
		return -EINVAL;
	}
	if (attr->qp_type == IB_QPT_UD && ibpost_dev_iwarp(dev)) {
		pr_warn_ratelimited("qp_create: %s is an iWARP device: RC QPs only, no UD\n",
				    dev->name);
		return -EOPNOTSUPP;
	}
	pages = attr->frwr_max_pages;
	return ibpost_frwr_attr_check(dev, attr->frwr_maps, &pages,
				      attr->qp_type) ?:
	       ibpost_rw_attr_check(attr);
}

/* The QP's own state, before it has a device or provider objects. */
static struct ibpost_qp *ibpost_qp_alloc(const struct ibpost_qp_attr *attr,
					 const char *caller)
{
	struct ibpost_qp *qp;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp)
		return NULL;
	refcount_set(&qp->ref, 1);
	/* One class for every QP's mutex: see ibpost_qp_lock(). */
	mutex_init(&qp->mutex);
	qp->attr = *attr;
	qp->caller = caller ?: KBUILD_MODNAME;
	ibpost_rw_init(qp);
	INIT_LIST_HEAD(&qp->cm_node);
	if (!qp->attr.signal_interval)
		qp->attr.signal_interval =
			max(READ_ONCE(default_signal_interval), 1U);
	INIT_LIST_HEAD(&qp->node);
	INIT_WORK(&qp->rqp.flush_work, ibpost_flush_work);
	INIT_WORK(&qp->event_work, ibpost_qp_event_work);
	qp->rqp.state = IB_QPS_RESET;
	qp->rqp.ud = attr->qp_type == IB_QPT_UD;
	qp->rqp.poll_ctx = attr->poll_ctx;
	ibpost_queue_init(&qp->sq, qp, &qp->rqp, true, attr->send_done);
	ibpost_queue_init(&qp->rq, qp, &qp->rqp, false, attr->recv_done);
	qp->sq.cqe = attr->ib_cqe;
	qp->rq.cqe = attr->ib_cqe;
	return qp;
}

/* RCU grace periods waited for before freeing CQs, for the test suites. */
atomic_long_t ibpost_cq_grace_periods = ATOMIC_LONG_INIT(0);

static void ibpost_count_gps(unsigned int gps)
{
	atomic_long_add(gps, &ibpost_cq_grace_periods);
}

/*
 * attr.shared_cq: the send and the receive CQ from ib_core's pool, on the
 * QP's vector; the QP's share of each is what its queue may hold (as
 * ibpost_qp_create_cqs() sizes its own). The pool's CQs have no
 * cq_context: every handler finds its queue from wc->wr_cqe.
 */
static int ibpost_qp_get_shared_cqs(struct ibpost_qp *qp)
{
	struct ib_device *ibdev = qp->dev->ibdev;
	struct ib_cq *cq;

	qp->cq_share[0] = ibpost_qp_sq_wrs(qp);
	qp->cq_share[1] = qp->attr.max_recv_wr + 1;
	/* ib_cq_pool_get() would allocate CQs without end for more. */
	if (max(qp->cq_share[0], qp->cq_share[1]) > ibdev->attrs.max_cqe) {
		pr_warn_ratelimited("qp_create: a shared CQ holds at most %d entries on %s\n",
				    ibdev->attrs.max_cqe, qp->dev->name);
		return -EINVAL;
	}
	cq = ib_cq_pool_get(ibdev, qp->cq_share[0], qp->attr.comp_vector,
			    qp->attr.poll_ctx);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	qp->sq.cq = cq;
	qp->rq.cq = NULL;
	cq = ib_cq_pool_get(ibdev, qp->cq_share[1], qp->attr.comp_vector,
			    qp->attr.poll_ctx);
	if (IS_ERR(cq)) {
		ib_cq_pool_put(qp->sq.cq, qp->cq_share[0]);
		return PTR_ERR(cq);
	}
	qp->rq.cq = cq;
	qp->sq.cq_id = qp->sq.cq->res.id;
	qp->rq.cq_id = cq->res.id;
	qp->sq.dev_id = ibdev->index;
	qp->rq.dev_id = ibdev->index;
	return 0;
}

/* Give a QP's shares of the pool's CQs back: nothing waits, none is freed. */
static void ibpost_qp_put_shared_cqs(struct ibpost_qp *qp)
{
	ib_cq_pool_put(qp->rq.cq, qp->cq_share[1]);
	ib_cq_pool_put(qp->sq.cq, qp->cq_share[0]);
}

/*
 * The entries the receive CQ holds: a completion per WR of its queue and
 * the drain marker; of an SRQ QP, one per WR of the SRQ, any of which it
 * may take.
 */
static u32 ibpost_qp_rq_cqes(const struct ibpost_qp *qp)
{
	if (qp->attr.srq)
		return qp->attr.srq->rq.depth + 1;
	return qp->attr.max_recv_wr + 1;
}

/* The send and the receive CQ, credited to the caller; qp_lock held. */
static int ibpost_qp_create_cqs(struct ibpost_qp *qp)
{
	struct ib_device *ibdev = qp->dev->ibdev;
	int ret;

	lockdep_assert_held(&qp->dev->qp_lock);
	ret = ibpost_dev_vector_get(qp->dev, qp->attr.comp_vector);
	if (ret < 0)
		return ret;
	qp->attr.comp_vector = ret;
	qp->vec_counted = true;
	if (qp->attr.shared_cq)
		return ibpost_qp_get_shared_cqs(qp);
	qp->sq.cq = __ib_alloc_cq(ibdev, &qp->sq, ibpost_qp_sq_wrs(qp),
				  qp->attr.comp_vector, qp->attr.poll_ctx,
				  qp->caller);
	if (IS_ERR(qp->sq.cq))
		return PTR_ERR(qp->sq.cq);
	qp->sq.cq_id = qp->sq.cq->res.id;
	qp->sq.dev_id = ibdev->index;
	qp->rq.cq = __ib_alloc_cq(ibdev, &qp->rq, ibpost_qp_rq_cqes(qp),
				  qp->attr.comp_vector, qp->attr.poll_ctx,
				  qp->caller);
	if (IS_ERR(qp->rq.cq)) {
		ret = PTR_ERR(qp->rq.cq);
		goto out_free_send_cq;
	}
	qp->rq.cq_id = qp->rq.cq->res.id;
	qp->rq.dev_id = ibdev->index;
	return 0;

out_free_send_cq:
	ibpost_count_gps(ibpost_free_cq(qp->sq.cq));
	return ret;
}

/* Undo ibpost_qp_create_cqs(). */
static void ibpost_qp_free_cqs(struct ibpost_qp *qp)
{
	if (qp->attr.shared_cq)
		ibpost_qp_put_shared_cqs(qp);
	else
		ibpost_count_gps(ibpost_free_cqs(qp->rq.cq, qp->sq.cq));
}

/* The provider's QP on the QP's CQs, through rdma_cm when @id is set. */
static int ibpost_qp_create_ibqp(struct ibpost_qp *qp, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init = {};
	int ret;

	init.qp_type = qp->attr.qp_type;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.send_cq = qp->sq.cq;
	init.recv_cq = qp->rq.cq;
	init.cap.max_send_wr = ibpost_qp_sq_wrs(qp);
	init.cap.max_send_sge = max_t(u32, qp->attr.max_send_sge, 1);
	if (qp->attr.srq) {
		init.srq = qp->attr.srq->rqp.ibsrq;
	} else {
		init.cap.max_recv_wr = qp->attr.max_recv_wr + 1;
		init.cap.max_recv_sge = max_t(u32, qp->attr.max_recv_sge, 1);
	}
	init.cap.max_inline_data = qp->attr.max_inline_data;
	/* ib_core's rdma_rw MR pool, where the transport needs one (rwop.c). */
	init.cap.max_rdma_ctxs = qp->attr.rw_ops;
	init.port_num = qp->port;
	init.event_handler = ibpost_qp_event;
	init.qp_context = qp;
	if (id) {
		qp->cm_id = id;
		ret = ibpost_cm_create_qp(qp, &init);
		if (ret)
			return ret;
	} else {
		qp->rqp.ibqp = ib_create_qp_kernel(qp->dev->pd, &init, qp->caller);
		if (IS_ERR(qp->rqp.ibqp)) {
			ret = PTR_ERR(qp->rqp.ibqp);
			qp->rqp.ibqp = NULL;
			return ret;
		}
	}
	qp->rqp.qpn = qp->rqp.ibqp->qp_num;
	return 0;
}

/* Undo ibpost_qp_create_ibqp(). */
static void ibpost_qp_destroy_ibqp(struct ibpost_qp *qp, struct rdma_cm_id *id)
{
	if (id)
		rdma_destroy_qp(id);
	else
		ib_destroy_qp(qp->rqp.ibqp);
}

/*
 * Test builds: the test hook may refuse @stage of a QP's set-up after
 * the provider's QP exists as if its allocation had failed, for the
 * unwinding that no allocation failure reaches without failing the
 * provider's own first.
 */
static int ibpost_qp_stage_refused(enum ibpost_qp_stage stage)
{
	return ibpost_hook(IBPOST_HOOK_QP_STAGE, (void *)(unsigned long)stage) ?
	       -ENOMEM : 0;
}

/* The slot rings, sized by what the provider granted. */
static int ibpost_qp_alloc_rings(struct ibpost_qp *qp)
{
	int ret;

	ret = ibpost_qp_query_caps(qp);
	if (ret)
		return ret;
	ret = ibpost_ring_alloc(&qp->sq, qp->attr.max_send_wr +
				2 * qp->attr.frwr_maps, qp->attr.max_send_sge);
	if (ret)
		return ret;
	/* An SRQ QP posts no receive: a ring of one that takes none. */
	ret = ibpost_ring_alloc(&qp->rq, max_t(u32, qp->attr.max_recv_wr, 1),
				qp->attr.max_recv_sge);
	if (ret)
		goto out_free_sq_ring;
	ret = ibpost_seed_alloc(&qp->seed[0], qp->sq.max_sge);
	if (ret)
		goto out_free_rq_ring;
	ret = ibpost_seed_alloc(&qp->seed[1], qp->rq.max_sge);
	if (ret)
		goto out_free_sq_seed;
	/* The LOCAL_INV slots of the fast-registration pool (frwr.c). */
	qp->sq.reserved = qp->attr.frwr_maps;
	/*
	 * A signal at least every interval WRs, and never beyond the ring
	 * the reserve leaves.
	 */
	qp->attr.signal_interval = min(qp->attr.signal_interval,
				       qp->sq.depth - qp->sq.reserved);
	qp->sq.signal_interval = qp->attr.signal_interval;
	qp->rq.signal_interval = 1;
	/* A received SEND_WITH_INV may retire any pool's key (frwr.c). */
	qp->rq.key_retired = ibpost_frwr_remote_inv;
	if (qp->attr.srq)
		qp->rq.depth = 0;
	return 0;

out_free_sq_seed:
	ibpost_seed_free(&qp->seed[0]);
out_free_rq_ring:
	ibpost_ring_free(&qp->rq);
out_free_sq_ring:
	ibpost_ring_free(&qp->sq);
	return ret;
}

/*
 * ibpost's accounting over what the provider granted: the slot rings, an
 * iWARP QP's READ sinks, the drain markers; then a UD QP not made by
 * rdma_cm is moved to RTS.
 */
static int ibpost_qp_init_queues(struct ibpost_qp *qp, struct rdma_cm_id *id)
{
	int ret;

	ret = ibpost_qp_stage_refused(IBPOST_QP_STAGE_RINGS) ?: ibpost_qp_alloc_rings(qp);
	if (ret)
		return ret;
	/* Checked at creation: this sets the default page count. */
	ret = ibpost_frwr_attr_check(qp->dev, qp->attr.frwr_maps,
				     &qp->attr.frwr_max_pages,
				     qp->attr.qp_type) ?:
	      ibpost_frwr_pool_init(qp);
	if (ret)
		goto out_free_rings;
	/* Only a cm QP can be connected on iWARP, and so ever READ. */
	if (ibpost_dev_iwarp(qp->dev) && id) {
		ret = ibpost_qp_stage_refused(IBPOST_QP_STAGE_SINKS) ?:
		      ibpost_sinks_alloc(&qp->sq);
		if (ret)
			goto out_free_frwr;
	}
	ret = ibpost_qp_stage_refused(IBPOST_QP_STAGE_DRAIN) ?: ibpost_drain_init(qp);
	if (ret)
		goto out_free_sinks;
	if (qp->attr.qp_type == IB_QPT_UD && !id) {
		ret = ibpost_qp_stage_refused(IBPOST_QP_STAGE_UD_RTS) ?: ibpost_qp_to_rts_ud(qp);
		if (ret)
			goto out_drain_cleanup;
	}
	return 0;

out_drain_cleanup:
	ibpost_drain_cleanup(qp);
out_free_sinks:
	/* Nothing was posted: the sinks may go before the QP. */
	ibpost_sinks_free(&qp->sq);
out_free_frwr:
	ibpost_frwr_pool_release(qp);
out_free_rings:
	ibpost_qp_free_rings(qp);
	return ret;
}

/*
 * Make the QP visible: on the device's list (removal tears it down from
 * then on), in debugfs, and on its cm_id's events; qp_lock held.
 */
static void ibpost_qp_publish(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev = qp->dev;

	lockdep_assert_held(&dev->qp_lock);
	kref_get(&dev->ref);
	list_add_tail(&qp->node, &dev->qps);
	dev->nr_qps++;
	ibpost_debugfs_add_qp(qp);
	if (qp->cm_id)
		ibpost_cm_attach(qp);
}

/*
 * Create a QP, its CQs and its accounting on @dev; through rdma_cm when
 * @id is set. @caller is credited in restrack.
 */
static struct ibpost_qp *ibpost_qp_new(struct ibpost_dev *dev,
				       const struct ibpost_qp_attr *attr,
				       const char *caller,
				       struct rdma_cm_id *id)
{
	bool stop_events = false;
	struct ibpost_qp *qp;
	int ret;

	ret = ibpost_qp_attr_check(dev, attr);
	if (ret)
		return ERR_PTR(ret);
	qp = ibpost_qp_alloc(attr, caller);
	if (!qp)
		return ERR_PTR(-ENOMEM);

	mutex_lock(&dev->qp_lock);
	if (test_bit(IBPOST_DEV_REMOVING, &dev->flags)) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (attr->srq) {
		ret = ibpost_srq_attach(dev, attr->srq, attr->poll_ctx);
		if (ret)
			goto out_unlock;
	}
	qp->dev = dev;
	qp->sq.dev = dev;
	qp->rq.dev = dev;
	qp->sq.dma_dev = dev->ibdev;
	qp->rq.dma_dev = dev->ibdev;
	qp->rqp.iwarp = ibpost_dev_iwarp(dev);
	qp->port = id ? id->port_num : ibpost_pick_port(dev->ibdev);
	ret = ibpost_qp_create_cqs(qp);
	if (ret)
		goto out_detach;
	ret = ibpost_qp_create_ibqp(qp, id);
	if (ret)
		goto out_free_cqs;
	ret = ibpost_qp_init_queues(qp, id);
	if (ret)
		goto out_destroy_qp;
	ibpost_qp_publish(qp);
	mutex_unlock(&dev->qp_lock);
	trace_ibpost_qp_create(qp);
	return qp;

out_destroy_qp:
	ibpost_qp_destroy_ibqp(qp, id);
	/* An event work that starts now finds no QP and calls nobody. */
	WRITE_ONCE(qp->rqp.ibqp, NULL);
	WRITE_ONCE(qp->events_off, true);
	stop_events = true;
out_free_cqs:
	ibpost_qp_free_cqs(qp);
out_detach:
	if (attr->srq)
		ibpost_srq_detach(attr->srq);
out_unlock:
	mutex_unlock(&dev->qp_lock);
	/*
	 * Waited for without dev->qp_lock: the event work takes qp->mutex,
	 * which ranks above it (ibpost_base.h).
	 */
	if (stop_events)
		ibpost_qp_events_stop(qp);
	ibpost_qp_free(qp);
	return ERR_PTR(ret);
}

/**
 * __ibpost_qp_create - create a QP, its CQs and its accounting on a device
 * @dev: the device (a reference is taken for the QP's lifetime)
 * @attr: what is wanted; see struct ibpost_qp_attr
 * @caller: the module credited for the QP and its CQs in restrack;
 *          consumers call ibpost_qp_create(), which passes KBUILD_MODNAME
 *
 * An RC QP is returned in RESET, to be connected with
 * ibpost_qp_connect_loopback(); a UD QP is returned in RTS with
 * @attr->qkey, ready to post. The capacities granted by the provider
 * (which may exceed the ones asked for) are read back with
 * ibpost_qp_get_attr().
 *
 * Context: Process context; may sleep.
 * Return: the QP, or an ERR_PTR: -EINVAL for a bad @attr, -EOPNOTSUPP for
 * a UD QP on an iWARP device, -ENODEV when the device is being removed,
 * -ENOMEM, or the provider's error.
 */
struct ibpost_qp *__ibpost_qp_create(struct ibpost_dev *dev,
				     const struct ibpost_qp_attr *attr,
				     const char *caller)
{
	return ibpost_qp_new(dev, attr, caller, NULL);
}
EXPORT_SYMBOL_NS_GPL(__ibpost_qp_create, IBPOST_NS);

/**
 * __ibpost_qp_create_cm - create a QP on an rdma_cm_id
 * @id: the cm_id, bound to its device: on the active side after
 *      RDMA_CM_EVENT_ROUTE_RESOLVED, on the passive side the new id of an
 *      RDMA_CM_EVENT_CONNECT_REQUEST (from within that event's handler)
 * @attr: what is wanted; see struct ibpost_qp_attr; @attr->qp_type must
 *        match the id's (RDMA_PS_TCP: RC, RDMA_PS_UDP: UD)
 * @caller: the module credited for the QP and its CQs in restrack;
 *          consumers call ibpost_qp_create_cm(), which passes
 *          KBUILD_MODNAME
 *
 * The QP is made by rdma_create_qp() on ibpost's PD of @id's device, with
 * ibpost's CQs and slot accounting; the consumer then calls
 * rdma_connect() or rdma_accept() as usual. Receives may be posted at
 * once, sends once RDMA_CM_EVENT_ESTABLISHED arrived. ibpost sees the
 * id's events before the consumer's handler does: after DISCONNECTED
 * every outstanding context comes back flushed, after DEVICE_REMOVAL
 * posts return -ENODEV. Destroy the QP with ibpost_qp_destroy() before
 * rdma_destroy_id().
 *
 * Context: Process context; may sleep (a cm event handler is fine).
 * Return: the QP, or an ERR_PTR: -EINVAL for a bad @attr or an id without
 * a device or of another QP type, -ENODEV when ibpost has no context on
 * the device, -ENOMEM, or the error of rdma_create_qp().
 */
struct ibpost_qp *__ibpost_qp_create_cm(struct rdma_cm_id *id,
					const struct ibpost_qp_attr *attr,
					const char *caller)
{
	struct ibpost_dev *dev;
	struct ibpost_qp *qp;

	if (!id || !attr)
		return ERR_PTR(-EINVAL);
	if (!id->device || id->qp || id->qp_type != attr->qp_type) {
		pr_warn_ratelimited("qp_create_cm: the id needs a device, no QP yet and the same QP type\n");
		return ERR_PTR(-EINVAL);
	}
	dev = ibpost_dev_of(id->device);
	if (!dev)
		return ERR_PTR(-ENODEV);
	qp = ibpost_qp_new(dev, attr, caller, id);
	ibpost_dev_put(dev);
	return qp;
}
EXPORT_SYMBOL_NS_GPL(__ibpost_qp_create_cm, IBPOST_NS);

/**
 * ibpost_qp_loopback_av - an address vector for the QP's own port
 * @qp: the QP
 * @ah: filled with the port's first GID (RoCE: with its netdev's MAC as
 *      dmac, which the core resolves only for userspace) or LID
 *
 * For rdma_create_ah() on ibpost_dev_pd(): a UD QP sends to another QP of
 * the same port through such an AH.
 *
 * Context: Process context.
 * Return: 0, -ENODEV when the device is gone, -EADDRNOTAVAIL when the
 * port has no usable GID, or the error reading it.
 */
int ibpost_qp_loopback_av(struct ibpost_qp *qp, struct rdma_ah_attr *ah)
{
	return qp->rqp.ibqp ? ibpost_loopback_av(qp, ah) : -ENODEV;
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_loopback_av, IBPOST_NS);

static int ibpost_qp_rc_to_rts(struct ibpost_qp *qp, u32 remote_qpn,
			       const struct rdma_ah_attr *av)
{
	struct ib_device *ibdev = qp->dev->ibdev;
	struct ib_port_attr pattr;
	struct ib_qp_attr qa;
	int mask, ret;

	ret = ib_query_port(ibdev, qp->port, &pattr);
	if (ret)
		return ret;

	mask = ibpost_rc_init_attr(&qa, qp->port, IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC);
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, mask);
	if (ret)
		return ret;
	qp->left_reset = true;
	ibpost_set_state(qp, IB_QPS_INIT);

	mask = ibpost_rc_rtr_attr(&qa, ibdev, pattr.active_mtu, remote_qpn, av);
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, mask);
	if (ret)
		return ret;
	ibpost_set_state(qp, IB_QPS_RTR);

	mask = ibpost_rc_rts_attr(&qa, ibdev);
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, mask);
	if (ret)
		return ret;
	WRITE_ONCE(qp->ord, qa.max_rd_atomic);
	ibpost_set_state(qp, IB_QPS_RTS);
	return 0;
}

/**
 * ibpost_qp_connect_loopback - connect two RC QPs of one device together
 * @a: an RC QP in RESET
 * @b: another RC QP in RESET on the same device
 *
 * Moves both QPs RESET->INIT->RTR->RTS, addressed at the port's own GID
 * (with the netdev's MAC resolved for RoCE), so that each one's sends
 * arrive at the other.
 *
 * Context: Process context; may sleep.
 * Return: 0; -EINVAL when the QPs are not two RC QPs of one device;
 * -EOPNOTSUPP on an iWARP device, whose QPs connect through rdma_cm only
 * (ibpost_qp_create_cm()); -ENODEV when the device is gone; or the
 * provider's error.
 */
int ibpost_qp_connect_loopback(struct ibpost_qp *a, struct ibpost_qp *b)
{
	struct ibpost_qp *first, *second;
	struct rdma_ah_attr av_a, av_b;
	int ret;

	if (!a || !b || a == b || a->dev != b->dev ||
	    a->attr.qp_type != IB_QPT_RC || b->attr.qp_type != IB_QPT_RC)
		return -EINVAL;
	if (ibpost_dev_iwarp(a->dev)) {
		pr_warn_ratelimited("connect_loopback: %s is an iWARP device: its QPs connect through rdma_cm only\n",
				    a->dev->name);
		return -EOPNOTSUPP;
	}
	/* Both QPs' mutexes, in address order. */
	first = a < b ? a : b;
	second = a < b ? b : a;
	ibpost_qp_lock(first);
	mutex_lock_nested(&second->mutex,
			  min(ibpost_qp_nesting() + 1, IBPOST_QP_NEST_MAX + 1));
	if (!a->rqp.ibqp || !b->rqp.ibqp) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (a->left_reset || b->left_reset) {
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = ibpost_loopback_av(a, &av_a);
	if (ret)
		goto out_unlock;
	ret = ibpost_loopback_av(b, &av_b);
	if (ret)
		goto out_unlock;
	ret = ibpost_qp_rc_to_rts(a, b->rqp.ibqp->qp_num, &av_b);
	if (ret)
		goto out_unlock;
	ret = ibpost_qp_rc_to_rts(b, a->rqp.ibqp->qp_num, &av_a);
out_unlock:
	mutex_unlock(&second->mutex);
	mutex_unlock(&first->mutex);
	if (ret)
		pr_debug("loopback connect failed: %d\n", ret);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_connect_loopback, IBPOST_NS);

/*
 * Return the WRs posted while @qp was in ERR: the flush worker's, then,
 * for a DIRECT queue with a callback, which the worker leaves to the
 * consumer's own calls, here, by the caller (qp->mutex held, qp->poller
 * current).
 */
static void ibpost_qp_return_synthetic(struct ibpost_qp *qp)
{
	lockdep_assert_held(&qp->mutex);
	flush_work(&qp->rqp.flush_work);
	if (ibpost_queue_direct_cb(&qp->sq))
		ibpost_queue_finish_synthetic(&qp->sq, U32_MAX);
	if (ibpost_queue_direct_cb(&qp->rq))
		ibpost_queue_finish_synthetic(&qp->rq, U32_MAX);
}

/*
 * Return as flushed every WR of both rings the provider did not (see
 * ibpost_queue_flush()). Callbacks may run: never under dev->qp_lock,
 * which a callback's ibpost_dereg_mr() takes.
 */
static void ibpost_qp_flush_rings(struct ibpost_qp *qp, bool drained,
				  bool drop_done)
{
	lockdep_assert_not_held(&qp->dev->qp_lock);
	ibpost_queue_flush(&qp->sq, drained, drop_done);
	ibpost_queue_flush(&qp->rq, drained, drop_done);
}

/*
 * An SRQ QP's receive completions, which no marker can prove polled (no
 * receive can be posted to the QP): poll its receive CQ until empty and
 * its own context (irq_poll, work item) idle, so that each comes back
 * (through the SRQ's ring, which finds the QP from the CQ) now, none
 * still on its way: with the QP in ERR and its send queue drained (RESET,
 * teardown), and again once the provider QP is destroyed (@gone: it takes
 * and completes nothing more). Those have wc->qp NULL, as the provider QP
 * is freed (ibpost_qp_ibqp() says so too). As the QP's other callbacks
 * at teardown, a SOFTIRQ QP's run with bottom halves off. The CQ's own
 * context may deliver a batch it polled meanwhile, on another CPU: the
 * QP's last receive callbacks may then overlap, out of order, as a
 * teardown's flushes may with a CQ's; that batch is over before this
 * returns. That wait is bounded by drain_timeout_ms, as a receive
 * marker's would be (a callback of another SRQ QP's CQ work may be
 * waiting for this QP's mutex). Return: whether the CQ was left empty and
 * quiet in time.
 */
static bool ibpost_qp_reap_srq(struct ibpost_qp *qp, bool gone)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(ibpost_drain_timeout_ms());
	bool bh = qp->attr.poll_ctx == IB_POLL_SOFTIRQ;
	struct ib_cq *cq = qp->rq.cq;
	struct ib_wc wc;

	lockdep_assert_held(&qp->mutex);
	for (;;) {
		if (bh)
			local_bh_disable();
		while (ib_poll_cq(cq, 1, &wc) > 0) {
			if (gone)
				wc.qp = NULL;
			if (wc.wr_cqe)
				wc.wr_cqe->done(cq, &wc);
		}
		if (bh)
			local_bh_enable();
		if (!ibpost_cq_poll_busy(cq))
			return true;
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(100, 200);
	}
}

/*
 * The first half of a teardown: move the QP to ERR, drain it and destroy
 * the provider's QP; its CQs are left to ibpost_qp_teardown_cqs().
 */
static void ibpost_qp_teardown_qp(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev = qp->dev;
	bool drained = true;
	unsigned long flags;

	lockdep_assert_held(&qp->mutex);
	trace_ibpost_qp_destroy(qp);
	/* No post reaches the provider after this. */
	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->rqp.dead = true;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	ibpost_rq_barrier(qp);
	/* WRs posted in ERR before that: returned flushed. */
	ibpost_qp_return_synthetic(qp);

	mutex_lock(&dev->qp_lock);
	ibpost_debugfs_remove_qp(qp);
	ibpost_mrs_forget_qp(qp);
	mutex_unlock(&dev->qp_lock);

	/*
	 * Moves the QP to ERR and waits for every posted WR to complete. A
	 * QP never connected, or moved back to RESET (which returned every
	 * WR, and takes none), has nothing to drain; nor may it go to ERR.
	 */
	if (qp->left_reset && READ_ONCE(qp->rqp.state) != IB_QPS_RESET)
		drained = ibpost_drain(qp);
	WRITE_ONCE(qp->rqp.state, IB_QPS_ERR);
	/*
	 * Before the destroy too: a provider may purge a destroyed QP's
	 * completions from its CQ (mlx4, mlx5) and give their WRs back to
	 * the SRQ, the data lost.
	 */
	if (qp->attr.srq && !ibpost_qp_reap_srq(qp, false))
		pr_warn_ratelimited("qp %u: its receive CQ's own poll did not end within drain_timeout_ms; destroying it anyway\n",
				    qp->rqp.qpn);
	/* ib_core's READ/WRITE contexts read the QP: destroyed before it. */
	ibpost_rw_quiesce(qp);
	if (qp->cm_id)
		ibpost_cm_destroy_qp(qp);
	else
		ib_destroy_qp(qp->rqp.ibqp);
	WRITE_ONCE(qp->rqp.ibqp, NULL);
	/* Operations whose MRs went with the QP: their contexts may go. */
	ibpost_rw_release(qp);
	if (qp->attr.srq)
		ibpost_qp_reap_srq(qp, true);
	ibpost_drain_cleanup(qp);
	qp->drained = drained;
	qp->cqs_left = true;
}

/*
 * The second half: free the CQs the first half left, then the sinks, and
 * return every context the provider did not. A device removal waits once
 * for the CQs of all its QPs (removal.c) and marks them quiet; a teardown
 * that comes before that claims the CQs, so that the removal no longer
 * reads them, and waits for their polls itself (ibpost_free_cqs()).
 */
static void ibpost_qp_teardown_cqs(struct ibpost_qp *qp, bool removal)
{
	struct ibpost_dev *dev = qp->dev;
	bool quiet;

	lockdep_assert_held(&qp->mutex);
	mutex_lock(&dev->qp_lock);
	quiet = qp->cqs_quiet;
	qp->cqs_claimed = true;
	mutex_unlock(&dev->qp_lock);
	/*
	 * Quiet, unless something scheduled a poll since the wait. The bit
	 * alone cannot tell a poll that ran since: none can, as nothing
	 * schedules one once the provider's QP is destroyed (the first
	 * half); the test only covers a provider that still would.
	 */
	if (qp->attr.shared_cq) {
		/*
		 * Not drained: the provider may still complete a WR of the
		 * destroyed QP on a CQ that outlives it, through a slot of
		 * this QP. Its memory is kept for good, said once.
		 */
		if (!qp->drained || qp->drain_failed) {
			qp->kept = true;
			/* Its handlers are ibpost's code: no unload. */
			__module_get(THIS_MODULE);
			pr_warn_ratelimited("qp %u: not drained on shared CQs: its memory is kept for completions that may still come\n",
					    qp->rqp.qpn);
		}
		ibpost_qp_put_shared_cqs(qp);
	} else if (quiet && !ibpost_cq_poll_scheduled(qp->rq.cq) &&
		   !ibpost_cq_poll_scheduled(qp->sq.cq)) {
		ib_free_cq(qp->rq.cq);
		ib_free_cq(qp->sq.cq);
	} else {
		ibpost_count_gps(ibpost_free_cqs(qp->rq.cq, qp->sq.cq));
	}
	/* Read unlocked, by address only (ibpost_qp_in_callback()). */
	WRITE_ONCE(qp->rq.cq, NULL);
	WRITE_ONCE(qp->sq.cq, NULL);
	qp->cqs_left = false;
	ibpost_sinks_free(&qp->sq);
	/* Its MRs go; the contexts of unmaps in flight come back below. */
	ibpost_frwr_pool_release(qp);
	/*
	 * Anything the provider did not return comes back flushed; what
	 * nobody fetched stays after a removal, and for a release callback.
	 */
	ibpost_qp_flush_rings(qp, qp->drained,
			      !removal && !qp->attr.release);
	/* Queued by the pool's flushed contexts, which are back: idle. */
	flush_work(&qp->rqp.flush_work);
}

/*
 * Tear the provider's side of a QP down, once: move it to ERR, drain,
 * destroy the QP and its CQs, and return every context the provider did
 * not; or finish a teardown whose CQs a device removal left
 * (ibpost_qp_teardown_start()). @removal: the device is going away;
 * completions nobody fetched stay for ibpost_get_*_comp(). Takes
 * qp->mutex, under which callbacks run; never under dev->qp_lock, but
 * under the client's lock when the consumer destroys the QP from its
 * ibpost_client callback.
 */
void ibpost_qp_teardown(struct ibpost_qp *qp, bool removal)
{
	struct task_struct *was;

	ibpost_qp_lock(qp);
	if (qp->rqp.ibqp || qp->cqs_left) {
		was = ibpost_qp_poller_take(qp);
		if (qp->rqp.ibqp)
			ibpost_qp_teardown_qp(qp);
		ibpost_qp_teardown_cqs(qp, removal);
		ibpost_qp_poller_give(qp, was);
	}
	mutex_unlock(&qp->mutex);
}

/*
 * Device removal's first half of @qp's teardown: the provider's QP
 * destroyed, its CQs left for ibpost_qp_teardown(), which the removal
 * calls once it has waited for the CQs of all its QPs together.
 * Return: whether the CQs were left (there was a QP to tear down).
 */
bool ibpost_qp_teardown_start(struct ibpost_qp *qp)
{
	struct task_struct *was;
	bool left = false;

	ibpost_qp_lock(qp);
	if (qp->rqp.ibqp) {
		was = ibpost_qp_poller_take(qp);
		ibpost_qp_teardown_qp(qp);
		ibpost_qp_poller_give(qp, was);
		left = true;
	}
	mutex_unlock(&qp->mutex);
	return left;
}

/**
 * ibpost_qp_destroy - drain and destroy a QP
 * @qp: the QP, or NULL
 *
 * Every context posted on @qp comes back (a success, an error or a flush
 * completion) before this returns. Completions still queued for
 * ibpost_get_*_comp() (parked, or flushed by the teardown or an earlier
 * device removal) go to the QP's @release callback, one call each in
 * completion order, the send queue's first; without one they are dropped
 * with the QP. Works on a QP whose device has been removed, and while its
 * completion callbacks deregister MRs.
 *
 * Context: Process context; may sleep. Not from @qp's own callbacks: a
 * destroy from one of them (whichever thread runs it), or from a bottom
 * half, is a consumer bug, reported once (WARN_ONCE) and refused, the QP
 * left as it was.
 * Return: nothing.
 */
void ibpost_qp_destroy(struct ibpost_qp *qp)
{
	struct ibpost_dev *dev;

	if (IS_ERR_OR_NULL(qp))
		return;
	/* It would wait for itself: its callback's work, drain or mutex. */
	if (unlikely(ibpost_qp_in_callback(qp, true))) {
		/* A suite that provokes it counts it instead. */
		if (!ibpost_hook(IBPOST_HOOK_DESTROY_REFUSED, qp))
			WARN_ONCE(1, "ibpost: qp_destroy from a callback of the QP or a bottom half: refused\n");
		return;
	}
	dev = qp->dev;
	ibpost_qp_teardown(qp, false);
	/* The provider QP is gone: no event comes later. */
	ibpost_qp_events_stop(qp);
	if (qp->attr.release) {
		WRITE_ONCE(qp->releasing, current);
		ibpost_queue_release_done(&qp->sq);
		ibpost_queue_release_done(&qp->rq);
		WRITE_ONCE(qp->releasing, NULL);
	}
	/* Without a release callback: forget what nobody fetched. */
	ibpost_qp_flush_rings(qp, false, true);
	mutex_lock(&dev->qp_lock);
	if (!list_empty(&qp->node)) {
		list_del_init(&qp->node);
		dev->nr_qps--;
	}
	if (qp->attr.srq)
		ibpost_srq_detach(qp->attr.srq);
	/* The QP's counters stay in its device's stats file. */
	ibpost_stats_add(&dev->retired[0], &qp->sq.stats);
	ibpost_stats_add(&dev->retired[1], &qp->rq.stats);
	mutex_unlock(&dev->qp_lock);
	ibpost_qp_put(qp);
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_destroy, IBPOST_NS);

/*
 * Whether contexts of the send queue wait for keys to be revoked (unmaps
 * whose LOCAL_INV was flushed, frwr.c; failed READ/WRITE operations,
 * rwop.c), or, with @flushing, for the flush of WRs posted meanwhile.
 */
static bool ibpost_qp_revoking(struct ibpost_qp *qp, bool flushing)
{
	if (!qp->frwr.n && !qp->attr.rw_ops)
		return false;
	return (qp->frwr.n && ibpost_frwr_revoking(qp)) ||
	       (qp->attr.rw_ops && ibpost_rw_revoking(qp)) ||
	       (flushing && READ_ONCE(qp->sq.nr_synthetic));
}

/*
 * On the way to RESET: move the QP to ERR and drain it,
 * so that every outstanding context comes back (IB_WC_WR_FLUSH_ERR), then
 * leave the ring empty for a later RESET->RTS. Posts meanwhile are flushed
 * by ibpost (the QP is in ERR). A drain that does not finish leaves the
 * QP in ERR with its slots as they are: the provider may still return
 * them, and only teardown (which frees the CQs first) may say it never
 * will. Return: 0, or -ETIMEDOUT.
 */
static int ibpost_qp_flush_outstanding(struct ibpost_qp *qp)
{
	struct task_struct *poller;
	u32 rounds = 0;
	int ret = 0;

	/*
	 * The callbacks run here are this task's polling of the QP: a
	 * callback's own wait or state change must not take qp->mutex.
	 */
	poller = ibpost_qp_poller_take(qp);
	ibpost_set_state(qp, IB_QPS_ERR);
	ibpost_qp_return_synthetic(qp);
	if (!ibpost_drain(qp)) {
		ret = -ETIMEDOUT;
		goto out;
	}
	ibpost_qp_flush_rings(qp, true, false);
	/* The SRQ's WRs it took: back before RESET, as its own. */
	if (qp->attr.srq && !ibpost_qp_reap_srq(qp, false)) {
		ret = -ETIMEDOUT;
		goto out;
	}
	/*
	 * WRs posted in ERR while draining, and the contexts of unmaps whose
	 * LOCAL_INV was flushed and of failed READ/WRITE operations that
	 * registered (revoked first; a callback's unmap may start another):
	 * flushed before RESET too.
	 */
	do {
		ibpost_frwr_quiesce(qp);
		ibpost_rw_flush(qp);
		ibpost_qp_return_synthetic(qp);
	} while (ibpost_qp_revoking(qp, true) &&
		 ++rounds <= 2 * (qp->frwr.n + qp->attr.rw_ops) + 2);
	/* Callbacks that keep starting unmaps: not RESET with them out. */
	if (ibpost_qp_revoking(qp, false))
		ret = -ETIMEDOUT;
out:
	ibpost_qp_poller_give(qp, poller);
	return ret;
}

/**
 * ibpost_qp_modify - change a QP's attributes, keeping ibpost's view of it
 * @qp: the QP
 * @attr: as for ib_modify_qp()
 * @attr_mask: as for ib_modify_qp()
 *
 * Consumers change a QP's state through this call (not ib_modify_qp() on
 * ibpost_qp_ibqp()), so that posting follows: WRs posted after a move to
 * ERR are flushed, posts outside RTS get -ENOTCONN. On the way to RESET
 * the QP is first moved to ERR and drained: every outstanding context
 * comes back with IB_WC_WR_FLUSH_ERR before the provider discards its
 * queues (should RESET then be refused, or the provider not flush within
 * drain_timeout_ms, the QP stays in ERR).
 *
 * Context: Process context; may sleep. From a DIRECT QP's own callbacks,
 * which run only from its consumer's calls (ibpost_poll(), and ibpost's
 * waits inside them), any change. From @qp's other callbacks (a CQ's work
 * item, ibpost's flush worker) no RESET, which waits for their
 * completions, and no change while another task holds the QP (it may be
 * waiting for the callback); from a bottom half, none.
 * Return: 0, -ENODEV when the device is gone, -ETIMEDOUT when the drain
 * before RESET did not finish, -EWOULDBLOCK from a callback or bottom
 * half (above) where the change would wait, or ib_modify_qp()'s error (the
 * state is then unchanged, but for a failed RESET: ERR).
 */
int ibpost_qp_modify(struct ibpost_qp *qp, struct ib_qp_attr *attr,
		     int attr_mask)
{
	bool to_reset = (attr_mask & IB_QP_STATE) &&
			attr->qp_state == IB_QPS_RESET;
	/* From a DIRECT callback of this QP's own polling: already held. */
	bool nested = ibpost_qp_polled_by_current(qp);
	bool blocked = false;
	int ret;

	if (nested) {
		/* Polled by this very task, which holds qp->mutex. */
	} else if (unlikely(ibpost_qp_in_callback(qp, true))) {
		/*
		 * RESET waits for this callback's queue; the mutex's holder
		 * (a teardown, a RESET) may be waiting for this very work.
		 */
		if (to_reset || ibpost_cannot_sleep() ||
		    !mutex_trylock(&qp->mutex))
			return -EWOULDBLOCK;
	} else {
		ibpost_qp_lock(qp);
	}
	if (!qp->rqp.ibqp) {
		ret = -ENODEV;
		goto out_unlock;
	}
	/*
	 * The provider discards what it holds on the way to RESET, without
	 * completions: return every outstanding context first, flushed.
	 */
	if (to_reset && qp->rqp.state != IB_QPS_RESET && qp->left_reset) {
		blocked = ibpost_ring_reclaim_block(&qp->sq);
		ret = ibpost_qp_flush_outstanding(qp);
		if (ret)
			goto out_unblock;
	}
	ret = ib_modify_qp(qp->rqp.ibqp, attr, attr_mask);
	if (ret)
		goto out_unblock;
	/* RESET clears it; IBA's default is none. */
	if (attr_mask & IB_QP_MAX_QP_RD_ATOMIC)
		WRITE_ONCE(qp->ord, min_t(u32, attr->max_rd_atomic, U8_MAX));
	else if (to_reset)
		WRITE_ONCE(qp->ord, 0);
	/* A UD send's Q_Key with its high bit set stands for this one. */
	if (attr_mask & IB_QP_QKEY)
		WRITE_ONCE(qp->attr.qkey, attr->qkey);
	if (!(attr_mask & IB_QP_STATE))
		goto out_unlock;
	if (attr->qp_state != IB_QPS_RESET)
		qp->left_reset = true;
	ibpost_set_state(qp, attr->qp_state);
out_unblock:
	if (to_reset)
		ibpost_ring_reclaim_unblock(&qp->sq, blocked, !ret);
out_unlock:
	if (!nested)
		mutex_unlock(&qp->mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_modify, IBPOST_NS);

/**
 * ibpost_qp_ibqp - the provider's QP behind an ibpost QP
 * @qp: the QP
 *
 * For queries and for connecting through rdma_cm; posting directly on it
 * bypasses ibpost's accounting and is not allowed.
 *
 * Context: Any context.
 * Return: the ib_qp, or NULL once the device has been removed.
 */
struct ib_qp *ibpost_qp_ibqp(struct ibpost_qp *qp)
{
	return READ_ONCE(qp->rqp.ibqp);
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_ibqp, IBPOST_NS);

/**
 * ibpost_qp_priv - the consumer's pointer given at creation
 * @qp: the QP
 *
 * Context: Any context.
 * Return: @attr->priv as passed to ibpost_qp_create().
 */
void *ibpost_qp_priv(struct ibpost_qp *qp)
{
	return qp->attr.priv;
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_priv, IBPOST_NS);

/**
 * ibpost_qp_get_attr - the QP's attributes with the granted capacities
 * @qp: the QP
 * @attr: filled with the attributes; the capacities are the usable ones
 *        the provider granted (at least what was asked), and
 *        signal_interval the one in force
 *
 * Context: Any context.
 * Return: nothing.
 */
void ibpost_qp_get_attr(struct ibpost_qp *qp, struct ibpost_qp_attr *attr)
{
	*attr = qp->attr;
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_get_attr, IBPOST_NS);
