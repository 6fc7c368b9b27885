// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_xhost: the link goes down under a full send queue.
 *
 * Host B fills its send queue with signaled 16 KiB RDMA WRITEs, takes its
 * link to host A down at once, and streams on: XC_AFTER more WRITEs as
 * slots free up. Every posted context must come back (the first WRs may
 * have made it; those posted after the link went down cannot: an error,
 * then flushes), and the QP is in ERR. With the link up again the
 * disconnect completes (A answers the DREQ) and a new connection works.
 * The link is brought back up at test exit whatever happened.
 *
 * Who ends the QP: the provider, with a send error or a retry timeout,
 * or, when it has not within XC_GIVEUP_SECS, the consumer, as a ULP's
 * keepalive would, by moving the QP to ERR itself. rxe in Linux 6.1 takes
 * either way depending on timing: when the netdev is down, ip_local_out()
 * drops its packet and rxe_send() turns that into -EAGAIN, which the
 * requester retries for as long as the link stays down, with no error and
 * no retry timeout. Either way every context comes back exactly once.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <kunit/test.h>
#include <rdma/rdma_cm.h>
#include "xhost.h"

#define XC_NETDEV	"eth0"		/* the link to host A */
#define XC_BIG		(16U * 1024)	/* each WRITE */
#define XC_FILL_MAX	4096U
#define XC_LOSS_SECS	60
#define XC_GIVEUP_SECS	20		/* the consumer's "keepalive" */
#define XC_PORT_SECS	30
#define XC_DREQ_SECS	90
#define XC_AFTER	32		/* WRITEs posted after the link is down */

static int xc_link_set(bool up)
{
	struct net_device *dev;
	unsigned int flags;
	int ret;

	dev = dev_get_by_name(&init_net, XC_NETDEV);
	if (!dev)
		return -ENODEV;
	rtnl_lock();
	flags = up ? dev->flags | IFF_UP : dev->flags & ~IFF_UP;
	ret = dev_change_flags(dev, flags, NULL);
	rtnl_unlock();
	dev_put(dev);
	return ret;
}

/* At test exit, whatever happened: the link is up again. */
static void xc_link_restore(void *unused)
{
	xc_link_set(true);
}

static bool xc_port_active(struct xc_conn *c, unsigned int secs)
{
	unsigned long deadline = jiffies + secs * HZ;
	struct ib_port_attr pa;

	for (;;) {
		if (!ib_query_port(c->id->device, c->id->port_num, &pa) &&
		    pa.state == IB_PORT_ACTIVE)
			return true;
		if (time_after(jiffies, deadline))
			return false;
		msleep(100);
	}
}

/* Signaled 16 KiB WRITEs until the send queue takes no more. */
static u32 xc_fill_sq(struct xc_conn *c)
{
	int ret = 0;
	u32 n;

	for (n = 0; n < XC_FILL_MAX; n++) {
		ret = ibpost_post_write(c->qp, (void *)(uintptr_t)(n + 1),
					c->data.buf, XC_BIG, c->data.mr,
					IB_SEND_SIGNALED,
					c->peer.wr_addr + (n % 4) * XC_BIG,
					c->peer.wr_rkey);
		if (ret)
			break;
	}
	KUNIT_EXPECT_EQ(c->test, ret, -ENOMEM);
	return n;
}

/* Take one send context before @deadline; count it and its failure. */
static bool xc_take(struct xc_conn *c, unsigned long deadline, u32 *returned,
		    u32 *failed, enum ib_wc_status *first)
{
	long left = (long)(deadline - jiffies);
	struct ibpost_comp comp;

	if (left <= 0 || ibpost_get_send_comp(c->qp, &comp, left) != 1)
		return false;
	(*returned)++;
	if (comp.status != IB_WC_SUCCESS && !(*failed)++)
		*first = comp.status;
	return true;
}

/*
 * The stream goes on over the dead link: XC_AFTER more WRITEs, each as a
 * slot frees up. Return: how many were posted.
 */
static u32 xc_stream_on(struct xc_conn *c, u32 base, unsigned long deadline,
			u32 *returned, u32 *failed, enum ib_wc_status *first)
{
	u32 more = 0;
	int ret;

	while (more < XC_AFTER) {
		ret = ibpost_post_write(c->qp, (void *)(uintptr_t)(base + more),
					c->data.buf, XC_BIG, c->data.mr,
					IB_SEND_SIGNALED,
					c->peer.wr_addr + (more % 4) * XC_BIG,
					c->peer.wr_rkey);
		if (ret == -ENOMEM) {
			if (!xc_take(c, deadline, returned, failed, first))
				break;
			continue;
		}
		KUNIT_EXPECT_EQ(c->test, ret, 0);
		if (ret)
			break;
		more++;
	}
	return more;
}

void xhost_link_loss_and_reconnect(struct kunit *test)
{
	enum ib_wc_status first = IB_WC_SUCCESS;
	u32 posted, returned = 0, failed = 0;
	unsigned long deadline;
	struct xc_conn *c;

	c = xc_open(test);
	KUNIT_ASSERT_NOT_NULL(test, c);
	ibpost_test_need_ib(test, c->dev,
			    "a WRITE is over once TCP has it, so those posted after the link went down succeed, and TCP notices the loss only after minutes of retransmission");
	xhost_fill(c->data.buf, XC_BIG, 0x4c);
	ibpost_test_defer(test, xc_link_restore, NULL);

	posted = xc_fill_sq(c);
	KUNIT_ASSERT_GT(test, posted, 0U);
	KUNIT_ASSERT_EQ(test, xc_link_set(false), 0);
	deadline = jiffies + XC_GIVEUP_SECS * HZ;
	posted += xc_stream_on(c, posted + 1, deadline, &returned, &failed,
			       &first);
	while (returned < posted &&
	       xc_take(c, deadline, &returned, &failed, &first))
		;
	if (returned < posted) {
		struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

		kunit_info(test, "%u of %u contexts back after %d s, none failed by the provider: the consumer moves the QP to ERR\n",
			   returned, posted, XC_GIVEUP_SECS);
		KUNIT_EXPECT_EQ(test, ibpost_qp_modify(c->qp, &qa,
						       IB_QP_STATE), 0);
		/* Whatever was not posted yet goes in as a flush. */
		posted += xc_stream_on(c, posted + 1,
				       jiffies + XC_LOSS_SECS * HZ,
				       &returned, &failed, &first);
		deadline = jiffies + XC_LOSS_SECS * HZ;
		while (returned < posted &&
		       xc_take(c, deadline, &returned, &failed, &first))
			;
	}
	kunit_info(test, "%u of %u contexts back, %u failed, first %s\n",
		   returned, posted, failed, ib_wc_status_msg(first));
	KUNIT_EXPECT_EQ(test, returned, posted);
	KUNIT_EXPECT_GE(test, failed, XC_AFTER);
	KUNIT_EXPECT_EQ(test, ibpost_test_qp_state(test, c->qp), IB_QPS_ERR);

	KUNIT_ASSERT_EQ(test, xc_link_set(true), 0);
	KUNIT_ASSERT_TRUE_MSG(test, xc_port_active(c, XC_PORT_SECS),
			      "%s not active within %d s",
			      dev_name(&c->id->device->dev), XC_PORT_SECS);
	/* The DREQ reaches A now, which answers it. */
	xc_disconnect(c, XC_DREQ_SECS);
	xc_close(c);

	c = xc_open(test);
	KUNIT_ASSERT_NOT_NULL(test, c);
	xc_echo(c, XC_ECHO_LEN, 0x4d);
	xc_disconnect(c, XC_DISC_SECS);
}
