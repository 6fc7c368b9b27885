// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost KUnit module: helpers shared by the suites. The suites run when
 * the module is loaded (CONFIG_KUNIT=m), after the guest has made rxe0.
 */
#include <linux/module.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/umh.h>
#include <linux/workqueue.h>
#include "ibpost_test.h"
#include "../drivers/ibpost_rc.h"

/*
 * Knobs. Module parameters cannot steer the suites: with CONFIG_KUNIT=m
 * they run from the module notifier, before the module's parameters are
 * parsed. The guest puts "name=value ..." in /ibpost/kunit_args instead
 * (IBPOST_KUNIT_ARGS on the host).
 */
#define IBPOST_TEST_ARGS "/ibpost/kunit_args"

/* The value of "@name=" in the knobs into @tok, or false. */
static bool ibpost_test_knob_tok(const char *name, char *tok, size_t size)
{
	static char args[256];
	static bool loaded;
	char key[48], *p;
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (!loaded) {
		loaded = true;
		f = filp_open(IBPOST_TEST_ARGS, O_RDONLY, 0);
		if (!IS_ERR(f)) {
			n = kernel_read(f, args, sizeof(args) - 1, &pos);
			args[n > 0 ? n : 0] = '\0';
			filp_close(f, NULL);
		}
	}
	snprintf(key, sizeof(key), "%s=", name);
	for (p = strstr(args, key); p; p = strstr(p + 1, key)) {
		if (p != args && p[-1] != ' ')
			continue;
		p += strlen(key);
		strscpy(tok, p, min_t(size_t, size, strcspn(p, "\n ") + 1));
		return true;
	}
	return false;
}

uint ibpost_test_knob(const char *name, uint def)
{
	char tok[16];
	uint val;

	if (ibpost_test_knob_tok(name, tok, sizeof(tok)) &&
	    !kstrtouint(tok, 0, &val))
		return val;
	return def;
}

const char *ibpost_test_ibdev(void)
{
	static char name[IB_DEVICE_NAME_MAX];

	if (!name[0] && !ibpost_test_knob_tok("ibdev", name, sizeof(name)))
		strscpy(name, "rxe0", sizeof(name));
	return name;
}

static void ibpost_test_dev_put(void *data)
{
	ibpost_dev_put(data);
}

struct ibpost_dev *ibpost_test_dev(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_dev_get(ibpost_test_ibdev());

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dev), "no ibpost device %s: %ld",
			       ibpost_test_ibdev(), PTR_ERR(dev));
	ibpost_test_defer(test, ibpost_test_dev_put, dev);
	return dev;
}

void ibpost_test_attr(struct ibpost_qp_attr *attr, enum ib_qp_type type)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_type = type;
	attr->max_send_wr = 16;
	attr->max_recv_wr = 16;
	attr->max_send_sge = 2;
	attr->max_recv_sge = 2;
	attr->qkey = 0x11111111;
	attr->poll_ctx = IB_POLL_SOFTIRQ;
}

static void ibpost_test_qp_free(void *data)
{
	ibpost_qp_destroy(data);
}

void ibpost_test_defer_qp(struct kunit *test, struct ibpost_qp *qp)
{
	ibpost_test_defer(test, ibpost_test_qp_free, qp);
}

struct ibpost_qp *ibpost_test_qp(struct kunit *test, struct ibpost_dev *dev,
				 const struct ibpost_qp_attr *attr)
{
	struct ibpost_qp *qp = ibpost_qp_create(dev, attr);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	ibpost_test_defer_qp(test, qp);
	return qp;
}

void ibpost_test_qp_destroy(struct kunit *test, struct ibpost_qp *qp)
{
	ibpost_test_undefer(test, qp);
}

void ibpost_test_fill(void *buf, size_t len, u32 seed)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 131 + i * 7 + (i >> 8));
}

u8 *ibpost_test_canary(struct kunit *test, void *buf, size_t len, u32 seed)
{
	u8 *copy = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	ibpost_test_fill(buf, len, seed);
	memcpy(copy, buf, len);
	return copy;
}

int ibpost_test_landed(const void *dst, const void *src, size_t len)
{
	int i;

	for (i = 0; i < 400 && memcmp(dst, src, len); i++)
		usleep_range(5000, 10000);
	return memcmp(dst, src, len);
}

void ibpost_test_expect_canary(struct kunit *test, const u8 *buf,
			       const u8 *canary, size_t len)
{
	size_t i = 0;

	while (i < len && buf[i] == canary[i])
		i++;
	KUNIT_EXPECT_EQ_MSG(test, i, len,
			    "byte %zu of %zu changed: %#x, its canary %#x", i,
			    len, i < len ? buf[i] : 0, i < len ? canary[i] : 0);
}

static void ibpost_test_pair_free(void *data)
{
	struct ibpost_test_pair *p = data;

	/* The QPs first: their flushes release the MRs' users. */
	ibpost_qp_destroy(p->a);
	ibpost_qp_destroy(p->b);
	ibpost_test_cm_free(p->cm);
	ibpost_test_buf_fini(&p->br);
	ibpost_test_buf_fini(&p->bw);
	ibpost_test_buf_fini(&p->bbuf);
	ibpost_test_buf_fini(&p->abuf);
	ibpost_dev_put(p->dev);
	kfree(p);
}

struct ibpost_test_pair *ibpost_test_pair(struct kunit *test,
					  const struct ibpost_qp_attr *attr)
{
	return ibpost_test_pair_len(test, attr, IBPOST_TEST_BUF_LEN);
}

struct ibpost_test_pair *ibpost_test_pair_len(struct kunit *test,
					      const struct ibpost_qp_attr *attr,
					      size_t len)
{
	struct ibpost_qp_attr def;
	struct ibpost_test_pair *p;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->dev = ibpost_dev_get(ibpost_test_ibdev());
	if (IS_ERR(p->dev)) {
		kfree(p);
		KUNIT_FAIL_AND_ABORT(test, "no ibpost device %s",
				     ibpost_test_ibdev());
	}
	ibpost_test_defer(test, ibpost_test_pair_free, p);
	if (!attr) {
		ibpost_test_attr(&def, IB_QPT_RC);
		def.max_inline_data = 64;
		attr = &def;
	}
	ret = ibpost_test_connect_pair(p->dev, attr, attr, &p->a, &p->b,
				       &p->cm);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "cannot connect a pair on %s: %d",
			    ibpost_test_ibdev(), ret);
	ibpost_qp_get_attr(p->a, &p->got);
	ibpost_test_buf_init(test, &p->abuf, p->dev, NULL, len,
			     IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &p->bbuf, p->dev, NULL, len,
			     IBPOST_TEST_MSGS);
	ibpost_test_buf_init(test, &p->bw, p->dev, p->b, len,
			     IBPOST_TEST_WRITE);
	ibpost_test_buf_init(test, &p->br, p->dev, p->b, len,
			     IBPOST_TEST_READ);
	return p;
}

static void ibpost_test_ah_free(void *data)
{
	rdma_destroy_ah(data, RDMA_DESTROY_AH_SLEEPABLE);
}

struct ib_ah *ibpost_test_loopback_ah(struct kunit *test, struct ibpost_qp *qp)
{
	struct rdma_ah_attr av;
	struct ib_ah *ah;

	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_loopback_av(qp, &av));
	ah = rdma_create_ah(ibpost_dev_pd(ibpost_test_dev(test)), &av,
			    RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	ibpost_test_defer(test, ibpost_test_ah_free, ah);
	return ah;
}

void ibpost_test_connect(struct kunit *test, struct ibpost_qp *qp,
			 struct ibpost_qp *peer, enum ib_qp_state state,
			 u8 min_rnr_timer, u8 rnr_retry)
{
	struct ib_port_attr pattr;
	struct rdma_ah_attr av;
	struct ib_device *ibdev;
	struct ib_qp_attr qa;
	int mask;

	if (state == IB_QPS_RESET)
		return;
	/*
	 * ibpost's own loopback attributes (ibpost_rc.h), but for the access
	 * flags, the RNR values given and a retry_cnt of 1.
	 */
	mask = ibpost_rc_init_attr(&qa, 1, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(qp, &qa, mask));
	if (state == IB_QPS_INIT)
		return;
	ibdev = ibpost_qp_ibqp(qp)->device;
	KUNIT_ASSERT_EQ(test, 0, ib_query_port(ibdev, 1, &pattr));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_loopback_av(qp, &av));
	mask = ibpost_rc_rtr_attr(&qa, ibdev, pattr.active_mtu,
				  ibpost_qp_ibqp(peer)->qp_num, &av);
	qa.min_rnr_timer = min_rnr_timer;
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(qp, &qa, mask));
	if (state == IB_QPS_RTR)
		return;
	mask = ibpost_rc_rts_attr(&qa, ibdev);
	qa.retry_cnt = 1;
	qa.rnr_retry = rnr_retry;
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(qp, &qa, mask));
}

struct ibpost_qp *ibpost_test_rnr_pair(struct kunit *test,
				       struct ibpost_dev *dev,
				       const struct ibpost_qp_attr *attr,
				       u8 min_rnr_timer, u8 rnr_retry,
				       struct ibpost_qp **peer)
{
	struct ibpost_qp_attr zattr;
	struct ibpost_qp *a, *z;

	ibpost_test_attr(&zattr, IB_QPT_RC);
	a = ibpost_test_qp(test, dev, attr);
	z = ibpost_test_qp(test, dev, &zattr);
	ibpost_test_connect(test, a, z, IB_QPS_RTS, min_rnr_timer, rnr_retry);
	ibpost_test_connect(test, z, a, IB_QPS_RTS, min_rnr_timer, rnr_retry);
	if (peer)
		*peer = z;
	return a;
}

static void ibpost_test_cb_record(struct ibpost_qp *qp, void *context,
				  const struct ib_wc *wc)
{
	struct ibpost_test_cb *c = ibpost_qp_priv(qp);
	unsigned long i = (unsigned long)context;
	bool first;

	spin_lock_bh(&c->lock);
	first = !c->calls++;
	/* Outside ib_cqe mode a wc never shows a wr_cqe (ibpost's own). */
	if (i >= IBPOST_TEST_CB_N || __test_and_set_bit(i, c->seen) ||
	    wc->wr_cqe)
		c->dups++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		c->flushed++;
	if (wc->status == IB_WC_SUCCESS)
		c->success++;
	spin_unlock_bh(&c->lock);
	/* Only a work item may wait (a softirq must not sleep). */
	if (first && READ_ONCE(c->hold) && !WARN_ON_ONCE(!in_task())) {
		complete(&c->entered);
		wait_for_completion_timeout(&c->release, 30 * HZ);
	}
}

void ibpost_test_cb_release(struct ibpost_test_cb *c)
{
	complete(&c->release);
}

static void ibpost_test_cb_release_action(void *data)
{
	ibpost_test_cb_release(data);
}

void ibpost_test_cb_hold(struct kunit *test, struct ibpost_test_cb *c)
{
	init_completion(&c->entered);
	init_completion(&c->release);
	c->hold = true;
	/* Whatever ends @test, the callback is let go before its QPs go. */
	ibpost_test_defer(test, ibpost_test_cb_release_action, c);
}

bool ibpost_test_cb_held(struct ibpost_test_cb *c)
{
	return wait_for_completion_timeout(&c->entered, 10 * HZ);
}

void ibpost_test_post_mixed(struct kunit *test, struct ibpost_test_pair *p)
{
	int i;

	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_send(p->a, CTX(i), p->abuf.buf, 8,
						 p->abuf.mr,
						 i & 1 ? IB_SEND_SIGNALED : 0));
	for (i = 4; i < 6; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_recv(p->a, CTX(i), p->abuf.buf, 8,
						 p->abuf.mr));
}

void ibpost_test_take_flushed(struct kunit *test, struct ibpost_qp *qp,
			      bool send, unsigned long *seen,
			      unsigned long nbits)
{
	struct ibpost_comp comp;
	unsigned long ctx;

	KUNIT_ASSERT_EQ(test, 1, send ? ibpost_get_send_comp(qp, &comp, 0) :
				       ibpost_get_recv_comp(qp, &comp, 0));
	ctx = (unsigned long)comp.context;
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, comp.status);
	KUNIT_ASSERT_LT(test, ctx, nbits);
	KUNIT_EXPECT_FALSE_MSG(test, __test_and_set_bit(ctx, seen),
			       "context %lu came back twice", ctx);
}

int ibpost_test_cb_calls(struct ibpost_test_cb *c)
{
	int n;

	spin_lock_bh(&c->lock);
	n = c->calls;
	spin_unlock_bh(&c->lock);
	return n;
}

int ibpost_test_cb_wait(struct ibpost_test_cb *c, int want)
{
	int tries;

	for (tries = 0; ibpost_test_cb_calls(c) < want && tries < 500; tries++)
		msleep(20);
	return ibpost_test_cb_calls(c);
}

struct ibpost_test_cb *ibpost_test_cb_attr(struct kunit *test,
					   struct ibpost_qp_attr *attr)
{
	struct ibpost_test_cb *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	spin_lock_init(&c->lock);
	ibpost_test_attr(attr, IB_QPT_RC);
	attr->send_done = ibpost_test_cb_record;
	attr->recv_done = ibpost_test_cb_record;
	attr->priv = c;
	return c;
}

static void ibpost_test_cbd_dereg(struct ibpost_test_cbd_recv *r)
{
	if (!ibpost_dereg_mr(r->mr))
		atomic_inc(&r->cbd->dereg_ok);
	atomic_inc(&r->cbd->calls);
}

static void ibpost_test_cbd_work(struct work_struct *w)
{
	ibpost_test_cbd_dereg(container_of(w, struct ibpost_test_cbd_recv,
					   work));
}

static void ibpost_test_cbd_recv_done(struct ibpost_qp *qp, void *context,
				      const struct ib_wc *wc)
{
	struct ibpost_test_cbd_recv *r = context;

	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&r->cbd->flushed);
	if (in_softirq())
		schedule_work(&r->work);	/* cannot sleep here */
	else
		ibpost_test_cbd_dereg(r);
}

/* After the QPs' destroy (deferred later, so run earlier): no work left. */
static void ibpost_test_cbd_flush(void *data)
{
	struct ibpost_test_cbd *c = data;
	int i;

	for (i = 0; i < IBPOST_TEST_CBD_N; i++)
		flush_work(&c->recv[i].work);
}

struct ibpost_test_cbd *ibpost_test_cbd(struct kunit *test,
					struct ibpost_dev *dev,
					enum ib_poll_context ctx)
{
	struct ibpost_test_cbd_recv *r;
	struct ibpost_qp_attr attr;
	struct ibpost_test_cbd *c;
	int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = 0; i < IBPOST_TEST_CBD_N; i++) {
		c->recv[i].cbd = c;
		INIT_WORK(&c->recv[i].work, ibpost_test_cbd_work);
	}
	ibpost_test_defer(test, ibpost_test_cbd_flush, c);
	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.poll_ctx = ctx;
	attr.recv_done = ibpost_test_cbd_recv_done;
	ibpost_test_qp_pair(test, dev, &attr, &attr, &c->a, &c->b);
	for (i = 0; i < IBPOST_TEST_CBD_N; i++) {
		r = &c->recv[i];
		r->buf = kunit_kzalloc(test, 256, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, r->buf);
		r->mr = ibpost_reg_msgs(dev, r->buf, 256);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->mr);
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(c->b, r, r->buf, 256,
							  r->mr));
	}
	return c;
}

void ibpost_test_cbd_check(struct kunit *test, struct ibpost_test_cbd *c)
{
	ibpost_test_cbd_flush(c);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), IBPOST_TEST_CBD_N);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->flushed), IBPOST_TEST_CBD_N);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->dereg_ok), IBPOST_TEST_CBD_N);
}

int ibpost_test_sh(const char *fmt, ...)
{
	char *cmd, *argv[4], *envp[3];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	cmd = kvasprintf(GFP_KERNEL, fmt, ap);
	va_end(ap);
	if (!cmd)
		return -ENOMEM;
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = cmd;
	argv[3] = NULL;
	envp[0] = "HOME=/";
	envp[1] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	envp[2] = NULL;
	ret = call_usermodehelper(argv[0], argv, envp, UMH_WAIT_PROC);
	kfree(cmd);
	return ret;
}

struct ibpost_test_param {
	const char *name;
	unsigned int dflt;
};

static int ibpost_test_param_write(const char *name, unsigned int val)
{
	return ibpost_test_sh("echo %u > /sys/module/ibpost/parameters/%s",
			      val, name);
}

static void ibpost_test_param_restore(void *data)
{
	struct ibpost_test_param *p = data;

	ibpost_test_param_write(p->name, p->dflt);
	kfree(p);
}

void ibpost_test_param_set(struct kunit *test, const char *name,
			   unsigned int val, unsigned int dflt)
{
	struct ibpost_test_param *p = kzalloc(sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->name = name;
	p->dflt = dflt;
	ibpost_test_defer(test, ibpost_test_param_restore, p);
	KUNIT_ASSERT_EQ_MSG(test, 0, ibpost_test_param_write(name, val),
			    "cannot set ibpost's parameter %s", name);
}

/*
 * Until @netdev's IPv6 link-local address is usable (5 s at most), read
 * from /proc/net/if_inet6 with the shell's builtins (fields: address,
 * index, prefix length, scope 20 = link, flags 40 = tentative, name).
 */
#define IBPOST_TEST_WAIT_LL \
	"n=0; until { ll=; while read -r a i p s f d; do " \
	"[ \"$d\" = %s ] && [ \"$s\" = 20 ] && " \
	"[ $((0x$f & 0x40)) = 0 ] && ll=1; done < /proc/net/if_inet6; " \
	"[ -n \"$ll\" ]; } || [ $n -ge 50 ]; " \
	"do sleep 0.1; n=$((n + 1)); done"

/*
 * A second device on a dummy netdev, in one shell (each command a usermode
 * helper forks and execs costs about 0.2 s under TCG, so the shell's
 * builtins test what exists): what a failed test left is deleted; the
 * netdev, made once and kept for the later cases, comes up with an
 * address of its own, which iWARP pairs connect over TCP to (a dummy
 * netdev is IFF_NOARP: addrconf runs no DAD on it); then the device, retried
 * while ib_core still holds the name of the one a case before deleted
 * (-ENFILE until it has freed it; the last refusal goes to the kernel
 * log), and, as traffic needs the port's link-local address usable, a
 * wait for it. A netdev whose set-up failed is deleted, not kept. Its
 * arguments: name x 2, netdev x 3, the address's third byte, netdev x 2,
 * name, type, netdev x 2.
 */
#define IBPOST_TEST_DEV2_MAKE \
	"[ ! -e /sys/class/infiniband/%s ] || rdma link delete %s; " \
	"[ -e /sys/class/net/%s ] || { ip link add %s type dummy && " \
	"ip link set %s up && ip addr add 10.97.%u.1/24 dev %s || " \
	"{ ip link del %s; exit 1; }; }; " \
	"n=0; until rdma link add %s type %s netdev %s 2>/tmp/dev2.err; do " \
	"[ $n -lt 100 ] || { cat /tmp/dev2.err > /dev/kmsg; exit 1; }; " \
	"sleep 0.1; n=$((n + 1)); done; " \
	IBPOST_TEST_WAIT_LL

/* The device of IBPOST_TEST_DEV2_MAKE and a renamed one (name x 2). */
#define IBPOST_TEST_DEV2_DELETE \
	"for n in %s %sr; do " \
	"[ ! -e /sys/class/infiniband/$n ] || rdma link delete $n; done"

struct ibpost_test_dev2 {
	char name[IB_DEVICE_NAME_MAX];
};

static void ibpost_test_dev2_free(void *data)
{
	struct ibpost_test_dev2 *d = data;

	/* Gone already when the test removed it; a rename is undone too. */
	ibpost_test_sh(IBPOST_TEST_DEV2_DELETE, d->name, d->name);
	kfree(d);
}

struct ibpost_dev *ibpost_test_dev2(struct kunit *test, const char *name,
				    const char *netdev)
{
	struct ibpost_test_dev2 *d = kzalloc(sizeof(*d), GFP_KERNEL);
	struct ibpost_dev *dev = ibpost_test_dev(test);
	const char *type = ibpost_test_iwarp(dev) ? "siw" : "rxe";
	/* Each netdev its own subnet: they all stay up at once. */
	u8 net = netdev[strlen(netdev) - 1];

	KUNIT_ASSERT_NOT_NULL(test, d);
	strscpy(d->name, name, sizeof(d->name));
	ibpost_test_defer(test, ibpost_test_dev2_free, d);
	KUNIT_ASSERT_EQ_MSG(test, 0,
			    ibpost_test_sh(IBPOST_TEST_DEV2_MAKE, name, name,
					   netdev, netdev, netdev, net,
					   netdev, netdev, name, type, netdev,
					   netdev),
			    "cannot make %s %s on %s", type, name, netdev);
	dev = ibpost_dev_get(name);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dev), "ibpost has no %s", name);
	ibpost_test_defer(test, ibpost_test_dev_put, dev);
	return dev;
}

/* A thread running @fn(@arg), and its end. */
struct ibpost_test_thread {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	struct completion done;
};

static int ibpost_test_thread_fn(void *data)
{
	struct ibpost_test_thread *t = data;

	t->ret = t->fn(t->arg);
	complete(&t->done);
	return 0;
}

struct ibpost_test_thread *ibpost_test_run(struct kunit *test,
					   int (*fn)(void *arg), void *arg)
{
	struct ibpost_test_thread *t;
	struct task_struct *task;

	/* Never freed before the thread ends: kept when it hangs. */
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->fn = fn;
	t->arg = arg;
	init_completion(&t->done);
	task = kthread_run(ibpost_test_thread_fn, t, "ibpost_test");
	if (IS_ERR(task)) {
		kfree(t);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	return t;
}

bool ibpost_test_join(struct ibpost_test_thread *t, long timeout, int *ret)
{
	if (!wait_for_completion_timeout(&t->done, timeout))
		return false;
	if (ret)
		*ret = t->ret;
	kfree(t);
	return true;
}

MODULE_DESCRIPTION("KUnit suites for ibpost, run against a live RDMA device");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
MODULE_IMPORT_NS(IBPOST_TEST_NS);
