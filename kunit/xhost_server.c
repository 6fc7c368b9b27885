// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_xhost_server: the server of the two-host test (see xhost.h).
 *
 * Listens through rdma_cm on XHOST_PORT of every address and serves one
 * connection at a time, over and over: a connect request while another
 * connection is live is rejected. For each connection the
 * CONNECT_REQUEST handler makes an ibpost QP on the new cm_id, posts all
 * XHOST_RECVS receives and accepts; at ESTABLISHED the work registers
 * the windows and sends HELLO (xhost_server_msg.c). When the connection
 * ends (DISCONNECTED, or an error) the handler answers the peer's DREQ
 * with rdma_disconnect() and queues the teardown, since a handler must
 * not destroy its own cm_id: the QP first (every receive context comes
 * back before ibpost_qp_destroy() returns), then the MRs, then the
 * cm_id. A connection no longer live is torn down while the next one
 * may already be served.
 *
 * /sys/kernel/debug/ibpost_xhost_server/status (root only) holds
 * "key value" lines: the counters of enum xs_stat, then "active" (1 while
 * a connection is live) and "pending" (connections not yet torn down).
 * "disconnected" counts established connections once their teardown is
 * complete, and recv_posted/recv_returned count torn-down connections:
 * when disconnected equals established, nothing established is left,
 * and the two are equal when every receive context came back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/in.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include "xhost.h"

/* How long a sender waits after the server's receive ring ran dry. */
#define XS_RNR_TIMER	IB_RNR_TIMER_001_28

atomic64_t xs_stats[XS_NR_STATS];

static const char * const xs_stat_names[XS_NR_STATS] = {
	[XS_CONNECTIONS] = "connections",
	[XS_ESTABLISHED] = "established",
	[XS_DISCONNECTED] = "disconnected",
	[XS_DATA_OK] = "data_ok",
	[XS_DATA_BAD] = "data_bad",
	[XS_ECHO_OK] = "echo_ok",
	[XS_CHECKS_OK] = "checks_ok",
	[XS_CHECKS_BAD] = "checks_bad",
	[XS_RECV_POSTED] = "recv_posted",
	[XS_RECV_RETURNED] = "recv_returned",
	[XS_SHUTDOWN] = "shutdown",
	[XS_REJECTED] = "rejected",
	[XS_MSGS_BAD] = "msgs_bad",
};

static struct rdma_cm_id *xs_listen;
static struct workqueue_struct *xs_wq;
static struct dentry *xs_dir;
static DEFINE_MUTEX(xs_lock);		/* xs_live, the connect requests */
static struct xs_conn *xs_live;
static atomic_t xs_pending = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(xs_gone);
static atomic_t xs_seq = ATOMIC_INIT(0);

/* Everything of @c but its cm_id, in order: QP, MRs, device. */
static void xs_conn_release(struct xs_conn *c)
{
	spin_lock_bh(&c->rx_lock);
	set_bit(XS_F_STOPPING, &c->flags);
	spin_unlock_bh(&c->rx_lock);
	cancel_work_sync(&c->work);
	if (c->qp)
		xs_map_release(c);
	ibpost_qp_destroy(c->qp);
	c->qp = NULL;
	/* Every context is back: an unmap's LOCAL_INV's too. */
	if (c->map_pages && !c->map.ent && READ_ONCE(c->map_inv_done))
		xs_map_free(c);
	atomic64_add(atomic_read(&c->recv_posted), &xs_stats[XS_RECV_POSTED]);
	atomic64_add(atomic_read(&c->recv_returned),
		     &xs_stats[XS_RECV_RETURNED]);
	xs_buffers_free(c);
	if (c->dev)
		ibpost_dev_put(c->dev);
	pr_info("connection %u closed: data ok %llu bad %llu, receives posted %d returned %d\n",
		c->nr, c->data_ok, c->data_bad, atomic_read(&c->recv_posted),
		atomic_read(&c->recv_returned));
}

static void xs_conn_free_work(struct work_struct *work)
{
	struct xs_conn *c = container_of(work, struct xs_conn, free_work);

	xs_conn_release(c);
	rdma_destroy_id(c->id);
	/* After recv_posted/recv_returned took this connection's counts. */
	if (test_bit(XS_F_ESTABLISHED, &c->flags))
		xs_count(XS_DISCONNECTED);
	kfree(c);
	if (atomic_dec_and_test(&xs_pending))
		wake_up_all(&xs_gone);
}

/* Claim the end of @c: true for the one caller that gets it. */
static bool xs_conn_claim_end(struct xs_conn *c)
{
	lockdep_assert_held(&xs_lock);
	if (test_and_set_bit(XS_F_ENDED, &c->flags))
		return false;
	if (xs_live == c)
		xs_live = NULL;
	return true;
}

/* Answer the peer's DREQ (or send ours), and queue the teardown. */
static void xs_conn_finish(struct xs_conn *c, const char *why)
{
	pr_info("connection %u: %s\n", c->nr, why);
	rdma_disconnect(c->id);
	queue_work(xs_wq, &c->free_work);
}

static void xs_conn_end(struct xs_conn *c, const char *why)
{
	bool mine;

	mutex_lock(&xs_lock);
	mine = xs_conn_claim_end(c);
	mutex_unlock(&xs_lock);
	if (mine)
		xs_conn_finish(c, why);
}

static struct xs_conn *xs_conn_alloc(struct rdma_cm_id *id)
{
	struct xs_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->nr = atomic_inc_return(&xs_seq);
	c->id = id;
	c->wq = xs_wq;
	INIT_WORK(&c->work, xs_conn_work);
	INIT_WORK(&c->free_work, xs_conn_free_work);
	spin_lock_init(&c->rx_lock);
	INIT_LIST_HEAD(&c->rx_done);
	init_completion(&c->tx_done);
	return c;
}

/* A connection's QP and buffers, with every receive posted. */
static struct xs_conn *xs_conn_new(struct rdma_cm_id *id)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 64, .max_recv_wr = XHOST_RECVS,
		.max_send_sge = 2, .max_recv_sge = 2,
		.poll_ctx = IB_POLL_SOFTIRQ,
		.send_done = xs_send_done, .recv_done = xs_recv_done,
		.frwr_maps = 1,
	};
	struct ibpost_dev *dev;
	struct xs_conn *c;
	int ret;

	c = xs_conn_alloc(id);
	if (!c)
		return ERR_PTR(-ENOMEM);
	dev = ibpost_dev_get(dev_name(&id->device->dev));
	if (IS_ERR(dev)) {
		ret = PTR_ERR(dev);
		goto out_release;
	}
	c->dev = dev;
	ret = xs_buffers_init(c);
	if (ret)
		goto out_release;
	attr.priv = c;
	c->qp = ibpost_qp_create_cm(id, &attr);
	if (IS_ERR(c->qp)) {
		ret = PTR_ERR(c->qp);
		c->qp = NULL;
		goto out_release;
	}
	ret = xs_post_recvs(c);
	if (!ret)
		ret = rdma_set_min_rnr_timer(id, XS_RNR_TIMER);
	if (ret)
		goto out_release;
	return c;

out_release:
	xs_conn_release(c);
	kfree(c);
	return ERR_PTR(ret);
}

/*
 * CONNECT_REQUEST on the new @id. xs_lock is held throughout, so two
 * requests (from two devices' listeners) cannot both become live.
 * Non-zero makes rdma_cm destroy @id; nothing of ours refers to it then.
 */
static int xs_connect_request(struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {
		.responder_resources = 4, .initiator_depth = 4,
		.rnr_retry_count = 7,
	};
	struct xs_conn *c = NULL;
	int ret = -EBUSY;

	mutex_lock(&xs_lock);
	if (!xs_live) {
		c = xs_conn_new(id);
		ret = PTR_ERR_OR_ZERO(c);
	}
	if (ret) {
		mutex_unlock(&xs_lock);
		xs_count(XS_REJECTED);
		pr_info("connect request rejected: %d\n", ret);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	id->context = c;
	ret = rdma_accept(id, &param);
	if (ret) {
		mutex_unlock(&xs_lock);
		pr_warn("connection %u: rdma_accept: %d\n", c->nr, ret);
		xs_conn_release(c);
		kfree(c);
		return ret;
	}
	xs_live = c;
	atomic_inc(&xs_pending);
	mutex_unlock(&xs_lock);
	xs_count(XS_CONNECTIONS);
	pr_info("connection %u from %pISpc accepted\n", c->nr,
		&id->route.addr.dst_addr);
	return 0;
}

static int xs_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct xs_conn *c = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return xs_connect_request(id);
	if (!c)
		return 0;	/* the listener */

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		xs_count(XS_ESTABLISHED);
		set_bit(XS_F_ESTABLISHED, &c->flags);
		xs_kick(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		xs_conn_end(c, rdma_event_msg(ev->event));
		break;
	default:
		break;
	}
	return 0;
}

static int xs_status_show(struct seq_file *m, void *unused)
{
	bool active;
	int i;

	for (i = 0; i < XS_NR_STATS; i++)
		seq_printf(m, "%s %lld\n", xs_stat_names[i],
			   (long long)atomic64_read(&xs_stats[i]));
	mutex_lock(&xs_lock);
	active = xs_live;
	mutex_unlock(&xs_lock);
	seq_printf(m, "active %d\npending %d\n", active,
		   atomic_read(&xs_pending));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xs_status);

static int __init xs_init(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(XHOST_PORT),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ret;

	xs_wq = alloc_ordered_workqueue("%s", 0, KBUILD_MODNAME);
	if (!xs_wq)
		return -ENOMEM;
	xs_listen = rdma_create_id(&init_net, xs_handler, NULL, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(xs_listen)) {
		ret = PTR_ERR(xs_listen);
		goto out_wq;
	}
	ret = rdma_bind_addr(xs_listen, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(xs_listen, 4);
	if (ret)
		goto out_id;
	xs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("status", 0400, xs_dir, NULL, &xs_status_fops);
	pr_info("listening on port %u\n", XHOST_PORT);
	return 0;

out_id:
	rdma_destroy_id(xs_listen);
out_wq:
	destroy_workqueue(xs_wq);
	pr_err("cannot listen on port %u: %d\n", XHOST_PORT, ret);
	return ret;
}

static void __exit xs_exit(void)
{
	struct xs_conn *c;

	debugfs_remove_recursive(xs_dir);
	/* Waits for a connect request in progress; none comes after. */
	rdma_destroy_id(xs_listen);

	mutex_lock(&xs_lock);
	c = xs_live;
	if (c && !xs_conn_claim_end(c))
		c = NULL;
	mutex_unlock(&xs_lock);
	if (c)
		xs_conn_finish(c, "module unload");

	/* Each teardown is bounded (ibpost's drain timeout): keep waiting. */
	while (!wait_event_timeout(xs_gone, !atomic_read(&xs_pending),
				   10 * HZ))
		pr_info("waiting for %d connections to close\n",
			atomic_read(&xs_pending));
	destroy_workqueue(xs_wq);
	pr_info("unloaded: %lld connections, data ok %lld bad %lld\n",
		(long long)atomic64_read(&xs_stats[XS_CONNECTIONS]),
		(long long)atomic64_read(&xs_stats[XS_DATA_OK]),
		(long long)atomic64_read(&xs_stats[XS_DATA_BAD]));
}

module_init(xs_init);
module_exit(xs_exit);

MODULE_DESCRIPTION("ibpost two-host test server: an rdma_cm ULP on ibpost");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
