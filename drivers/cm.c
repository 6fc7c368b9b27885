// SPDX-License-Identifier: GPL-2.0
/*
 * QPs on an rdma_cm_id (ibpost_qp_create_cm(), made in qp.c): their
 * provider QP made and destroyed through rdma_cm, and its events.
 *
 * rdma_cm moves the QP through its states itself (INIT at creation, RTR
 * and RTS inside rdma_connect()/rdma_accept(), ERR on a disconnect), by
 * ib_modify_qp() behind ibpost's back. So that posting follows those moves
 * without a query per post, ibpost interposes on the cm_id's event
 * handler: each event first refreshes ibpost's view of the QP's state from
 * the provider, then goes to the consumer's own handler unchanged. On
 * iWARP the view follows the events instead (INIT at creation, RTS at
 * ESTABLISHED): the provider moves the QP itself inside iw_cm, and its
 * query need not say (siw in 6.1 leaves qp_state unset). Sends
 * are accepted from RDMA_CM_EVENT_ESTABLISHED on; after DISCONNECTED (the
 * QP is in ERR) every outstanding context comes back flushed and later
 * WRs are flushed too; after DEVICE_REMOVAL ibpost's removal path has
 * already flushed everything and posts return -ENODEV.
 *
 * The consumer destroys the QP with ibpost_qp_destroy() before
 * rdma_destroy_id(), as rdma_destroy_qp() must come before it; the
 * original handler is put back then. When the consumer's handler returns
 * non-zero (rdma_cm then destroys the id), the QP is detached from the
 * id first.
 *
 * The id may be gone before the QP: a QP created inside the very event
 * that delivered its id (CONNECT_REQUEST on the passive side, or any
 * event on the active side) runs in a call of the consumer's handler that
 * ibpost's interposed handler is not part of. When that handler returns
 * non-zero, rdma_cm destroys the id and ibpost is not told. So ibpost
 * never trusts qp->cm_id at teardown: it looks the id up in rdma_cm's
 * resource tracking by the restrack id it recorded at creation (the
 * exported rdma_restrack_get_byid(), matched with rdma_res_to_id()), and
 * holds that entry while it uses the id, which keeps rdma_destroy_id()
 * from freeing it meanwhile. An id that is gone leaves the provider's QP
 * to ibpost, which destroys it directly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/restrack.h>
#include "cm.h"

static DEFINE_SPINLOCK(ibpost_cm_lock);
static LIST_HEAD(ibpost_cm_qps);

static struct ibpost_qp *ibpost_cm_find(struct rdma_cm_id *id)
{
	struct ibpost_qp *qp;

	lockdep_assert_held(&ibpost_cm_lock);
	list_for_each_entry(qp, &ibpost_cm_qps, cm_node)
		if (qp->cm_id == id)
			return qp;
	return NULL;
}

/* The connection is over: nothing more can complete but as a flush. */
static bool ibpost_cm_event_ends(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return true;
	default:
		return false;
	}
}

/*
 * iWARP: the ORD the connection negotiated. rdma_cm's ESTABLISHED carries
 * the provider's ird as initiator_depth and its ord as
 * responder_resources (cma_iw_handler()); siw, erdma and irdma report
 * there the IRD and ORD their QP uses (siw_cm_upcall()), so the ORD is
 * read from there, not from a query (siw's reports the two swapped). A
 * provider not known to (cxgb4 reports them the other way round) is
 * taken to have an ORD unless both are 0.
 */
static void ibpost_cm_iwarp_ord(struct ibpost_qp *qp,
				const struct rdma_cm_event *ev)
{
	u8 ord = ev->param.conn.responder_resources;

	switch (qp->dev->ibdev->ops.driver_id) {
	case RDMA_DRIVER_SIW:
	case RDMA_DRIVER_ERDMA:
	case RDMA_DRIVER_IRDMA:
		break;
	default:
		ord = max(ord, ev->param.conn.initiator_depth);
		break;
	}
	WRITE_ONCE(qp->ord, ord);
	pr_debug("qp %u: iWARP connection with ORD %u, IRD %u\n", qp->rqp.qpn,
		 ev->param.conn.responder_resources,
		 ev->param.conn.initiator_depth);
}

/*
 * Follow the state rdma_cm put the QP in; when the connection ended, move
 * it to ERR ourselves (a DREQ from the peer leaves it in RTS until the
 * consumer's rdma_disconnect()), so outstanding WRs flush now.
 */
static void ibpost_cm_sync_state(struct ibpost_qp *qp,
				 const struct rdma_cm_event *ev)
{
	enum rdma_cm_event_type event = ev->event;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_qp_init_attr init;

	lockdep_assert_held(&qp->mutex);
	if (!qp->rqp.ibqp || qp->rqp.dead)
		return;
	/*
	 * The consumer moved the QP to RESET (it starts in INIT): it holds
	 * no WR, and the end of its old connection, reported after that,
	 * must not move it to ERR (iWARP) or query it back (IB: the same).
	 */
	if (READ_ONCE(qp->rqp.state) == IB_QPS_RESET)
		return;
	if (ibpost_cm_event_ends(event) &&
	    (!ib_modify_qp(qp->rqp.ibqp, &qa, IB_QP_STATE) ||
	     ibpost_dev_iwarp(qp->dev))) {
		/* iWARP: the connection is over, whatever the provider said. */
		ibpost_set_state(qp, IB_QPS_ERR);
		return;
	}
	if (ibpost_dev_iwarp(qp->dev)) {
		/*
		 * Not from a query: see the top of this file. A completion
		 * may have found the QP in ERR meanwhile: keep that.
		 */
		if (event == RDMA_CM_EVENT_ESTABLISHED) {
			ibpost_cm_iwarp_ord(qp, ev);
			ibpost_set_state_from(qp, IB_QPS_INIT, IB_QPS_RTS);
		}
		return;
	}
	if (ib_query_qp(qp->rqp.ibqp, &qa, IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC,
			&init))
		return;
	if (qa.qp_state == IB_QPS_RTS || qa.qp_state == IB_QPS_SQD)
		WRITE_ONCE(qp->ord, qa.max_rd_atomic);
	ibpost_set_state(qp, qa.qp_state);
}

static int ibpost_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event)
{
	int (*handler)(struct rdma_cm_id *id, struct rdma_cm_event *event);
	struct ibpost_qp *qp;
	int ret;

	spin_lock(&ibpost_cm_lock);
	qp = ibpost_cm_find(id);
	handler = qp ? qp->cm_handler : READ_ONCE(id->event_handler);
	if (qp)
		refcount_inc(&qp->ref);
	spin_unlock(&ibpost_cm_lock);
	if (WARN_ON_ONCE(handler == ibpost_cm_handler))
		return 0;

	if (qp) {
		/* The reference keeps qp; its mutex orders us with teardown. */
		ibpost_qp_lock(qp);
		if (qp->cm_id == id)
			ibpost_cm_sync_state(qp, event);
		mutex_unlock(&qp->mutex);
		pr_debug("cm event %s (%d) on qp %u\n",
			 rdma_event_msg(event->event), event->status, qp->rqp.qpn);
		ibpost_qp_put(qp);
	}

	ret = handler(id, event);
	if (ret) {
		/* rdma_cm destroys the id on return: let go of it first. */
		spin_lock(&ibpost_cm_lock);
		qp = ibpost_cm_find(id);
		if (qp) {
			list_del_init(&qp->cm_node);
			id->event_handler = qp->cm_handler;
			WRITE_ONCE(qp->cm_id, NULL);
		}
		spin_unlock(&ibpost_cm_lock);
	}
	return ret;
}

/*
 * rdma_cm's resource-tracking entry of @id. rdma_res_to_id() is exported
 * as the container_of() from an entry to its id; its offset, taken from
 * that function (pure address arithmetic), leads back from the id.
 */
static struct rdma_restrack_entry *ibpost_cm_res(struct rdma_cm_id *id)
{
	struct rdma_restrack_entry *probe = (struct rdma_restrack_entry *)id;
	ptrdiff_t off = (char *)probe - (char *)rdma_res_to_id(probe);

	return (struct rdma_restrack_entry *)((char *)id + off);
}

/*
 * Whether @id, @qp's id, still exists: if so, its restrack entry is
 * returned held (rdma_destroy_id() waits for it), else NULL. An id that
 * was not tracked when the QP was made is trusted.
 */
static struct rdma_restrack_entry *ibpost_cm_hold(struct ibpost_qp *qp,
						  struct rdma_cm_id *id,
						  bool *alive)
{
	struct rdma_restrack_entry *res;

	*alive = false;
	if (!id)
		return NULL;
	if (!qp->cm_tracked) {
		*alive = true;
		return NULL;
	}
	res = rdma_restrack_get_byid(qp->dev->ibdev, RDMA_RESTRACK_CM_ID,
				     qp->cm_res_id);
	if (IS_ERR(res))
		return NULL;
	if (rdma_res_to_id(res) != id) {
		rdma_restrack_put(res);
		return NULL;
	}
	*alive = true;
	return res;
}

/*
 * Pass a QP's @event to rdma_cm (rdma_notify()), if the QP is on a cm_id
 * that still exists; process context (the QP's event work).
 */
void ibpost_cm_notify(struct ibpost_qp *qp, enum ib_event_type event)
{
	struct rdma_restrack_entry *res;
	struct rdma_cm_id *id;
	bool alive;

	spin_lock(&ibpost_cm_lock);
	id = qp->cm_id;
	spin_unlock(&ibpost_cm_lock);
	res = ibpost_cm_hold(qp, id, &alive);
	if (alive)
		rdma_notify(id, event);
	if (res)
		rdma_restrack_put(res);
}

/* Create the provider's QP through rdma_cm, for ibpost_qp_new(). */
int ibpost_cm_create_qp(struct ibpost_qp *qp, struct ib_qp_init_attr *init)
{
	struct rdma_restrack_entry *res = ibpost_cm_res(qp->cm_id);
	struct ib_qp_init_attr qinit;
	struct ib_qp_attr qa;
	int ret;

	lockdep_assert_held(&qp->dev->qp_lock);
	/*
	 * A device-bound id is tracked: remember where to find it. One that
	 * is not could be destroyed unseen: refused.
	 */
	if (!res->valid || res->no_track) {
		pr_warn_ratelimited("qp_create_cm: rdma_cm does not track this id\n");
		return -EINVAL;
	}
	qp->cm_tracked = true;
	qp->cm_res_id = res->id;
	ret = rdma_create_qp(qp->cm_id, qp->dev->pd, init);
	if (ret)
		return ret;
	qp->rqp.ibqp = qp->cm_id->qp;
	/* rdma_create_qp() credits rdma_cm: name the consumer instead. */
	WRITE_ONCE(qp->rqp.ibqp->res.kern_name, qp->caller);
	/*
	 * RC comes back in INIT, UD in RTS: whatever it is, follow it. A UD
	 * QP has rdma_cm's Q_Key (the port space's), not the caller's.
	 */
	ret = ib_query_qp(qp->rqp.ibqp, &qa, IB_QP_STATE | IB_QP_QKEY, &qinit);
	if (ret) {
		rdma_destroy_qp(qp->cm_id);
		qp->rqp.ibqp = NULL;
		return ret;
	}
	if (qp->attr.qp_type == IB_QPT_UD)
		qp->attr.qkey = qa.qkey;
	/* iWARP: rdma_create_qp() moved it to INIT, whatever the query says. */
	if (ibpost_dev_iwarp(qp->dev))
		qa.qp_state = IB_QPS_INIT;
	qp->left_reset = qa.qp_state != IB_QPS_RESET;
	qp->rqp.state = qa.qp_state;
	return 0;
}

/* Interpose on the cm_id's events, as ibpost_qp_new() lists the QP. */
void ibpost_cm_attach(struct ibpost_qp *qp)
{
	struct ibpost_qp *old, *tmp;

	lockdep_assert_held(&qp->dev->qp_lock);
	spin_lock(&ibpost_cm_lock);
	/*
	 * A QP whose id rdma_cm destroyed unannounced may still be listed
	 * under the same address, now reused by this live id: forget it.
	 */
	list_for_each_entry_safe(old, tmp, &ibpost_cm_qps, cm_node) {
		if (old->cm_id == qp->cm_id) {
			list_del_init(&old->cm_node);
			WRITE_ONCE(old->cm_id, NULL);
		}
	}
	qp->cm_handler = qp->cm_id->event_handler;
	list_add_tail(&qp->cm_node, &ibpost_cm_qps);
	WRITE_ONCE(qp->cm_id->event_handler, ibpost_cm_handler);
	spin_unlock(&ibpost_cm_lock);
}

/*
 * Teardown: give a live id its own handler back and destroy the QP
 * through it (rdma_destroy_qp() clears id->qp under rdma_cm's lock); for
 * an id rdma_cm destroyed, destroy the QP directly.
 */
void ibpost_cm_destroy_qp(struct ibpost_qp *qp)
{
	struct rdma_restrack_entry *res;
	struct rdma_cm_id *id;
	bool alive, listed;

	lockdep_assert_held(&qp->mutex);
	/*
	 * Hold the id first, then in one critical section: off the list,
	 * and the consumer's handler back, so that an event arriving now
	 * goes to the consumer, never to ibpost's handler without a QP.
	 */
	id = READ_ONCE(qp->cm_id);
	res = ibpost_cm_hold(qp, id, &alive);
	spin_lock(&ibpost_cm_lock);
	if (qp->cm_id != id)		/* detached meanwhile: rdma_cm's */
		alive = false;
	listed = !list_empty(&qp->cm_node);
	list_del_init(&qp->cm_node);
	if (alive && listed)
		WRITE_ONCE(id->event_handler, qp->cm_handler);
	WRITE_ONCE(qp->cm_id, NULL);
	spin_unlock(&ibpost_cm_lock);
	if (alive) {
		rdma_destroy_qp(id);	/* and clears id->qp */
	} else {
		pr_debug("qp %u: its cm_id is gone; destroying the QP directly\n",
			 qp->rqp.qpn);
		ib_destroy_qp(qp->rqp.ibqp);
	}
	if (res)
		rdma_restrack_put(res);
}
