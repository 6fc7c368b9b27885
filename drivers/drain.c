// SPDX-License-Identifier: GPL-2.0
/*
 * Draining a QP before it is destroyed.
 *
 * ib_drain_qp() cannot be used: its send-queue marker is an RDMA WRITE,
 * which a UD QP refuses (with a WARN), and it waits without a bound. ibpost
 * moves the QP to ERR and posts its own marker on each queue (a zero-length
 * RDMA WRITE on RC, a zero-length SEND to the QP's own port on UD, an
 * empty receive), kept in the ibpost_qp so that a marker that never
 * completes cannot be referenced after the QP is gone. The provider
 * completes or flushes every earlier WR before a marker; a queue whose
 * marker does not come back within drain_timeout_ms is reported, and
 * ibpost_queue_flush() returns what the provider did not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "drain.h"
#include "ibpost_trace.h"

static unsigned int drain_timeout_ms = 10000;
module_param(drain_timeout_ms, uint, 0644);
MODULE_PARM_DESC(drain_timeout_ms,
		 "How long a drain (QP destroy, device removal) waits for the provider's flush before ibpost returns the remaining contexts itself, in ms (default 10000)");

static void ibpost_marker_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibpost_marker *m =
		container_of(wc->wr_cqe, struct ibpost_marker, cqe);

	complete(&m->done);
}

/* A UD QP needs an address handle to post its send marker. */
int ibpost_drain_init(struct ibpost_qp *qp)
{
	struct rdma_ah_attr av;
	int ret;

	init_completion(&qp->sq_marker.done);
	init_completion(&qp->rq_marker.done);
	qp->sq_marker.cqe.done = ibpost_marker_done;
	qp->rq_marker.cqe.done = ibpost_marker_done;
	if (qp->attr.qp_type != IB_QPT_UD)
		return 0;
	ret = ibpost_loopback_av(qp, &av);
	if (ret)
		return ret;
	qp->drain_ah = rdma_create_ah(qp->dev->pd, &av,
				      RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(qp->drain_ah)) {
		ret = PTR_ERR(qp->drain_ah);
		qp->drain_ah = NULL;
		return ret;
	}
	return 0;
}

void ibpost_drain_cleanup(struct ibpost_qp *qp)
{
	if (qp->drain_ah)
		rdma_destroy_ah(qp->drain_ah, RDMA_DESTROY_AH_SLEEPABLE);
	qp->drain_ah = NULL;
}

/* How long a drain waits, for other waits that follow a move to ERR. */
unsigned int ibpost_drain_timeout_ms(void)
{
	return max(READ_ONCE(drain_timeout_ms), 1U);
}

static bool ibpost_marker_wait(struct ib_cq *cq, struct ibpost_marker *m)
{
	unsigned long deadline = jiffies +
		msecs_to_jiffies(max(READ_ONCE(drain_timeout_ms), 1U));

	while (!wait_for_completion_timeout(&m->done, HZ / 10)) {
		if (cq->poll_ctx == IB_POLL_DIRECT)
			ibpost_cq_poll(cq, -1);
		if (time_after(jiffies, deadline))
			return false;
	}
	return true;
}

/* Post a send marker on @qp, signaled, completing to @cqe. */
static int ibpost_send_marker(struct ibpost_qp *qp, struct ib_cqe *cqe)
{
	struct ib_ud_wr swr = {};

	swr.wr.wr_cqe = cqe;
	swr.wr.send_flags = IB_SEND_SIGNALED;
	if (qp->attr.qp_type == IB_QPT_UD) {
		swr.wr.opcode = IB_WR_SEND;
		swr.ah = qp->drain_ah;
		swr.remote_qpn = qp->rqp.ibqp->qp_num;
		swr.remote_qkey = READ_ONCE(qp->attr.qkey);
	} else {
		swr.wr.opcode = IB_WR_RDMA_WRITE;
	}
	return ib_post_send(qp->rqp.ibqp, &swr.wr, NULL);
}

/*
 * Post @qp's marker on one queue and wait for it. Return: 0 when it came
 * back, -ETIMEDOUT when not in time, or why the provider refused it.
 */
static int ibpost_marker_drain(struct ibpost_qp *qp, bool send)
{
	struct ib_recv_wr rwr = {};
	int ret;

	if (!send) {
		rwr.wr_cqe = &qp->rq_marker.cqe;
		ret = ib_post_recv(qp->rqp.ibqp, &rwr, NULL);
		if (ret)
			return ret;
		return ibpost_marker_wait(qp->rq.cq, &qp->rq_marker) ?
		       0 : -ETIMEDOUT;
	}
	ret = ibpost_send_marker(qp, &qp->sq_marker.cqe);
	if (ret)
		return ret;
	return ibpost_marker_wait(qp->sq.cq, &qp->sq_marker) ? 0 : -ETIMEDOUT;
}

/*
 * Under qp->mutex, with qp->rqp.dead set or the QP known to be in ERR, so no
 * post reaches the provider beside the markers. Callbacks run meanwhile.
 * Traced as ibpost_drain_start and ibpost_drain_end (each queue's
 * outcome). Return: true when both queues drained.
 */
bool ibpost_drain(struct ibpost_qp *qp)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	int ret, sq, rq;

	lockdep_assert_held(&qp->mutex);
	trace_ibpost_drain_start(qp);
	reinit_completion(&qp->sq_marker.done);
	reinit_completion(&qp->rq_marker.done);
	ret = ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE);
	if (ret) {
		ibdev_warn(qp->dev->ibdev,
			   "ibpost: QP %u cannot be moved to ERR: %d\n",
			   qp->rqp.ibqp->qp_num, ret);
		trace_ibpost_drain_end(qp, ret, ret);
		qp->drain_failed = true;
		return false;
	}

	sq = ibpost_marker_drain(qp, true);
	/* An SRQ QP takes no receive: the teardown reaps its CQ instead. */
	rq = qp->attr.srq ? 0 : ibpost_marker_drain(qp, false);
	trace_ibpost_drain_end(qp, sq, rq);
	if (sq || rq)
		ibdev_warn(qp->dev->ibdev,
			   "ibpost: QP %u did not drain (send %s, recv %s); returning its contexts as flushed\n",
			   qp->rqp.ibqp->qp_num, sq ? "stuck" : "ok",
			   rq ? "stuck" : "ok");
	/* For good: a late marker may satisfy a later drain's wait. */
	if (sq || rq)
		qp->drain_failed = true;
	return !sq && !rq;
}
