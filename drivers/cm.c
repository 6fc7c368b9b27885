// SPDX-License-Identifier: GPL-2.0
/*
 * QPs on an rdma_cm_id: ibpost_qp_create_cm().
 *
 * rdma_cm moves the QP through its states itself (INIT at creation, RTR
 * and RTS inside rdma_connect()/rdma_accept(), ERR on a disconnect), by
 * ib_modify_qp() behind ibpost's back. So that posting follows those moves
 * without a query per post, ibpost interposes on the cm_id's event
 * handler: each event first refreshes ibpost's view of the QP's state from
 * the provider, then goes to the consumer's own handler unchanged. Sends
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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "ibpost_internal.h"

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
 * Follow the state rdma_cm put the QP in; when the connection ended, move
 * it to ERR ourselves (a DREQ from the peer leaves it in RTS until the
 * consumer's rdma_disconnect()), so outstanding WRs flush now.
 * dev->qp_lock held.
 */
static void ibpost_cm_sync_state(struct ibpost_qp *qp, bool ends)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_qp_init_attr init;

	if (!qp->ibqp || qp->dead)
		return;
	if (ends && !ib_modify_qp(qp->ibqp, &qa, IB_QP_STATE)) {
		ibpost_set_state(qp, IB_QPS_ERR);
		return;
	}
	if (!ib_query_qp(qp->ibqp, &qa, IB_QP_STATE, &init))
		ibpost_set_state(qp, qa.qp_state);
}

static int ibpost_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event)
{
	int (*handler)(struct rdma_cm_id *id, struct rdma_cm_event *event);
	struct ibpost_dev *dev = NULL;
	struct ibpost_qp *qp;
	int ret;

	spin_lock(&ibpost_cm_lock);
	qp = ibpost_cm_find(id);
	handler = qp ? qp->cm_handler : READ_ONCE(id->event_handler);
	if (qp) {
		dev = qp->dev;
		kref_get(&dev->ref);
	}
	spin_unlock(&ibpost_cm_lock);
	if (WARN_ON_ONCE(handler == ibpost_cm_handler))
		return 0;

	if (dev) {
		/*
		 * qp stays valid: only ibpost_qp_destroy() frees it, after
		 * ibpost_cm_detach() under dev->qp_lock.
		 */
		mutex_lock(&dev->qp_lock);
		spin_lock(&ibpost_cm_lock);
		qp = ibpost_cm_find(id);
		spin_unlock(&ibpost_cm_lock);
		if (qp)
			ibpost_cm_sync_state(qp,
					     ibpost_cm_event_ends(event->event));
		mutex_unlock(&dev->qp_lock);
		pr_debug("cm event %s (%d) on qp %u\n",
			 rdma_event_msg(event->event), event->status,
			 qp ? qp->qpn : 0);
		ibpost_dev_put(dev);
	}

	ret = handler(id, event);
	if (ret) {
		/* rdma_cm destroys the id on return: let go of it first. */
		spin_lock(&ibpost_cm_lock);
		qp = ibpost_cm_find(id);
		if (qp) {
			list_del_init(&qp->cm_node);
			id->event_handler = qp->cm_handler;
			qp->cm_id = NULL;
		}
		spin_unlock(&ibpost_cm_lock);
	}
	return ret;
}

/* Create the provider's QP through rdma_cm; dev->qp_lock held. */
int ibpost_cm_create_qp(struct ibpost_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_init_attr qinit;
	struct ib_qp_attr qa;
	int ret;

	ret = rdma_create_qp(qp->cm_id, qp->dev->pd, init);
	if (ret)
		return ret;
	qp->ibqp = qp->cm_id->qp;
	/* rdma_create_qp() credits rdma_cm: name the consumer instead. */
	WRITE_ONCE(qp->ibqp->res.kern_name, qp->caller);
	/* RC comes back in INIT, UD in RTS: whatever it is, follow it. */
	ret = ib_query_qp(qp->ibqp, &qa, IB_QP_STATE, &qinit);
	if (ret) {
		rdma_destroy_qp(qp->cm_id);
		qp->ibqp = NULL;
		return ret;
	}
	qp->left_reset = qa.qp_state != IB_QPS_RESET;
	qp->state = qa.qp_state;
	return 0;
}

/* Interpose on the cm_id's events; dev->qp_lock held. */
void ibpost_cm_attach(struct ibpost_qp *qp)
{
	spin_lock(&ibpost_cm_lock);
	qp->cm_handler = qp->cm_id->event_handler;
	list_add_tail(&qp->cm_node, &ibpost_cm_qps);
	WRITE_ONCE(qp->cm_id->event_handler, ibpost_cm_handler);
	spin_unlock(&ibpost_cm_lock);
}

/* Give the cm_id its own handler back; dev->qp_lock held. */
void ibpost_cm_detach(struct ibpost_qp *qp)
{
	spin_lock(&ibpost_cm_lock);
	if (!list_empty(&qp->cm_node)) {
		list_del_init(&qp->cm_node);
		WRITE_ONCE(qp->cm_id->event_handler, qp->cm_handler);
	}
	spin_unlock(&ibpost_cm_lock);
}

/* The ibpost device of @ibdev, with a reference, or NULL. */
struct ibpost_dev *ibpost_dev_of(struct ib_device *ibdev)
{
	return ibdev ? ibpost_dev_get(dev_name(&ibdev->dev)) : NULL;
}

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
	if (IS_ERR_OR_NULL(dev))
		return ERR_PTR(-ENODEV);
	qp = ibpost_qp_new(dev, attr, caller, id);
	ibpost_dev_put(dev);
	return qp;
}
EXPORT_SYMBOL_NS_GPL(__ibpost_qp_create_cm, IBPOST);

/* The symbol behind the header's macro, for callers taking its address. */
struct ibpost_qp *(ibpost_qp_create_cm)(struct rdma_cm_id *id,
					const struct ibpost_qp_attr *attr)
{
	return __ibpost_qp_create_cm(id, attr, KBUILD_MODNAME);
}
EXPORT_SYMBOL_NS_GPL(ibpost_qp_create_cm, IBPOST);
