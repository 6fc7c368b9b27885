// SPDX-License-Identifier: GPL-2.0
/*
 * Connected RC pairs on "this device", whatever it is: a hand-made
 * loopback connection on InfiniBand and RoCE, rdma_cm (iw_cm over TCP, to
 * the address of the device's own netdev) on iWARP, whose QPs cannot be
 * moved to RTS by hand. The QPs are ibpost's either way; on iWARP the
 * pair's rdma_cm ids are kept until after both QPs are destroyed.
 *
 * The helper module ibpost_test_cm: the KUnit module and the test
 * consumers that the guest's device scenarios load (holder.c, traffic.c)
 * share it, on stock kernels too, so no KUnit here. What it creates is
 * credited to the module that asked (cm_connect.h's wrappers).
 */
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "cm_connect.h"

#define CM_PAIR_TIMEOUT		(10 * HZ)
#define CM_PAIR_PORT_BASE	18000

struct ibpost_test_cm {
	struct rdma_cm_id *listen, *client, *server;
	struct ibpost_qp_attr battr;
	struct ibpost_qp *b;
	bool b_taken;			/* the caller destroys @b */
	const char *caller;		/* the module credited */
	wait_queue_head_t wq;
	int phase;			/* CM_PAIR_* */
	unsigned long client_ev, server_ev;	/* bit per event type */
	int server_err;
};

static atomic_t cm_pair_port = ATOMIC_INIT(0);

/*
 * A pair's phase, moved by cmpxchg: a device removal while connecting
 * (the connecting thread may be using the ids) fails the connect, whose
 * caller then destroys the ids; once connected, rdma_cm destroys them.
 */
enum { CM_PAIR_CONNECTED, CM_PAIR_CONNECTING, CM_PAIR_REMOVED };

int ibpost_test_dev_addr(struct ibpost_dev *dev, struct sockaddr_in *sin)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct in_ifaddr *ifa = NULL;
	struct in_device *in_dev;
	struct net_device *nd;
	int ret = -EADDRNOTAVAIL;

	rtnl_lock();
	for_each_netdev(&init_net, nd) {
		struct ib_device *found;

		found = ib_device_get_by_netdev(nd, RDMA_DRIVER_UNKNOWN);
		if (!found)
			continue;
		ib_device_put(found);
		if (found != ibdev)
			continue;
		in_dev = __in_dev_get_rtnl(nd);
		if (in_dev)
			ifa = rtnl_dereference(in_dev->ifa_list);
		if (ifa) {
			sin->sin_addr.s_addr = ifa->ifa_local;
			ret = 0;
		}
		break;
	}
	rtnl_unlock();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_dev_addr, IBPOST_TEST_NS);

static void cm_pair_accept(struct ibpost_test_cm *c, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct ibpost_qp *qp;

	c->server = id;
	qp = __ibpost_qp_create_cm(id, &c->battr, c->caller);
	if (IS_ERR(qp)) {
		c->server_err = PTR_ERR(qp);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	c->b = qp;
	c->server_err = rdma_accept(id, &param);
}

static int cm_pair_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ibpost_test_cm *c = id->context;

	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL &&
	    cmpxchg(&c->phase, CM_PAIR_CONNECTING, CM_PAIR_REMOVED) ==
	    CM_PAIR_CONNECTING) {
		/* The connect fails; its caller destroys the ids. */
		set_bit(ev->event, &c->client_ev);
		set_bit(ev->event, &c->server_ev);
		wake_up_all(&c->wq);
		return 0;
	}
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		/*
		 * The removal waits for the ids: rdma_cm destroys this one,
		 * unless ibpost_test_cm_free() took it first (it destroys it).
		 */
		return cmpxchg(&c->client, id, NULL) == id ||
		       cmpxchg(&c->listen, id, NULL) == id ||
		       cmpxchg(&c->server, id, NULL) == id;
	}
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (c->server) {	/* one connection per listener */
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			return -ECONNREFUSED;	/* rdma_cm destroys @id */
		}
		cm_pair_accept(c, id);
	}
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, id == c->client ? &c->client_ev :
						     &c->server_ev);
	wake_up_all(&c->wq);
	return 0;
}

/* The client side reached @ev, or failed on the way (false). */
static bool cm_pair_wait(struct ibpost_test_cm *c, unsigned long *evs,
			 enum rdma_cm_event_type ev)
{
	unsigned long fail = BIT(RDMA_CM_EVENT_ADDR_ERROR) |
			     BIT(RDMA_CM_EVENT_ROUTE_ERROR) |
			     BIT(RDMA_CM_EVENT_CONNECT_ERROR) |
			     BIT(RDMA_CM_EVENT_UNREACHABLE) |
			     BIT(RDMA_CM_EVENT_REJECTED) |
			     BIT(RDMA_CM_EVENT_DEVICE_REMOVAL);

	wait_event_timeout(c->wq, test_bit(ev, evs) || (*evs & fail),
			   CM_PAIR_TIMEOUT);
	return test_bit(ev, evs);
}

void ibpost_test_cm_free(struct ibpost_test_cm *c)
{
	struct rdma_cm_id *id;

	if (!c)
		return;
	id = xchg(&c->client, NULL);
	if (id)
		rdma_destroy_id(id);
	id = xchg(&c->listen, NULL);
	if (id)
		rdma_destroy_id(id);
	/* After the listener: no handler can set these any more. */
	if (c->b && !c->b_taken)
		ibpost_qp_destroy(c->b);
	id = xchg(&c->server, NULL);
	if (id)
		rdma_destroy_id(id);
	kfree(c);
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_cm_free, IBPOST_TEST_NS);

/* Listen, resolve, create a's QP, connect: ibpost_test_cm_connect(). */
static int cm_pair_steps(struct ibpost_test_cm *c, struct ibpost_dev *dev,
			 struct sockaddr_in *sin,
			 const struct ibpost_qp_attr *aattr,
			 struct ibpost_qp **a)
{
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	struct ibpost_qp *qp;
	int ret;

	ret = rdma_bind_addr(c->listen, (struct sockaddr *)sin) ?:
	      rdma_listen(c->listen, 1) ?:
	      rdma_resolve_addr(c->client, NULL, (struct sockaddr *)sin,
				5000);
	if (ret)
		return ret;
	if (!cm_pair_wait(c, &c->client_ev, RDMA_CM_EVENT_ADDR_RESOLVED))
		return -EHOSTUNREACH;
	ret = rdma_resolve_route(c->client, 5000);
	if (ret)
		return ret;
	if (!cm_pair_wait(c, &c->client_ev, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -EHOSTUNREACH;
	if (!c->client || c->client->device != ibpost_dev_ibdev(dev))
		return -EXDEV;
	qp = __ibpost_qp_create_cm(c->client, aattr, c->caller);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	*a = qp;
	ret = rdma_connect(c->client, &param);
	if (ret)
		return ret;
	if (!cm_pair_wait(c, &c->client_ev, RDMA_CM_EVENT_ESTABLISHED))
		return c->server_err ?: -ECONNREFUSED;
	if (!cm_pair_wait(c, &c->server_ev, RDMA_CM_EVENT_ESTABLISHED))
		return c->server_err ?: -ETIMEDOUT;
	if (c->server_err)
		return c->server_err;
	return 0;
}

int __ibpost_test_cm_connect(struct ibpost_dev *dev,
			     const struct ibpost_qp_attr *aattr,
			     const struct ibpost_qp_attr *battr,
			     struct ibpost_qp **a, struct ibpost_qp **b,
			     struct ibpost_test_cm **cm, const char *caller)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct ibpost_test_cm *c;
	int ret;

	*a = NULL;
	*b = NULL;
	*cm = NULL;
	ret = ibpost_test_dev_addr(dev, &sin);
	if (ret)
		return ret;
	sin.sin_port = htons(CM_PAIR_PORT_BASE +
			     (atomic_inc_return(&cm_pair_port) & 4095));
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	*cm = c;
	init_waitqueue_head(&c->wq);
	c->phase = CM_PAIR_CONNECTING;
	c->battr = *battr;
	c->caller = caller;
	c->listen = __rdma_create_kernel_id(&init_net, cm_pair_handler, c,
					    RDMA_PS_TCP, IB_QPT_RC, caller);
	c->client = __rdma_create_kernel_id(&init_net, cm_pair_handler, c,
					    RDMA_PS_TCP, IB_QPT_RC, caller);
	if (IS_ERR(c->listen) || IS_ERR(c->client)) {
		ret = IS_ERR(c->listen) ? PTR_ERR(c->listen) :
					  PTR_ERR(c->client);
		if (!IS_ERR(c->listen))
			rdma_destroy_id(c->listen);
		if (!IS_ERR(c->client))
			rdma_destroy_id(c->client);
		c->listen = NULL;
		c->client = NULL;
		return ret;
	}
	ret = cm_pair_steps(c, dev, &sin, aattr, a);
	/* Connected, unless the device is going away (and rdma_cm said so). */
	if (cmpxchg(&c->phase, CM_PAIR_CONNECTING, CM_PAIR_CONNECTED) !=
	    CM_PAIR_CONNECTING)
		ret = ret ?: -ENODEV;
	if (ret)
		return ret;
	*b = c->b;
	c->b_taken = true;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(__ibpost_test_cm_connect, IBPOST_TEST_NS);

/* Whether @dev is iWARP; a device already removed is not connected at all. */
static int cm_dev_iwarp(struct ibpost_dev *dev)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);

	if (!ibdev)
		return -ENODEV;
	return rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
}

int __ibpost_test_connect_pair(struct ibpost_dev *dev,
			       const struct ibpost_qp_attr *aattr,
			       const struct ibpost_qp_attr *battr,
			       struct ibpost_qp **a, struct ibpost_qp **b,
			       struct ibpost_test_cm **cm, const char *caller)
{
	int ret;

	*cm = NULL;
	*b = NULL;
	*a = NULL;
	ret = cm_dev_iwarp(dev);
	if (ret < 0)
		return ret;
	if (ret)
		return __ibpost_test_cm_connect(dev, aattr, battr, a, b, cm,
						caller);
	*a = __ibpost_qp_create(dev, aattr, caller);
	if (IS_ERR(*a)) {
		ret = PTR_ERR(*a);
		*a = NULL;
		return ret;
	}
	*b = __ibpost_qp_create(dev, battr, caller);
	if (IS_ERR(*b)) {
		ret = PTR_ERR(*b);
		*b = NULL;
		return ret;
	}
	return ibpost_qp_connect_loopback(*a, *b);
}
EXPORT_SYMBOL_NS_GPL(__ibpost_test_connect_pair, IBPOST_TEST_NS);

MODULE_DESCRIPTION("ibpost test helper: connected RC pairs on any device");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
