// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_debugfs (drivers/debugfs.c): what /sys/kernel/debug/ibpost/
 * shows matches what the case did. The files are read as an administrator
 * reads them: the guest's shell copies one (kernel_read() cannot read a
 * seq_file of debugfs, which has no read_iter), the case reads the copy
 * and looks its "key value" lines up.
 */
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include "ibpost_test.h"

#define DBG_ROOT	"/sys/kernel/debug/ibpost"
#define DBG_COPY	"/ibpost/kunit-debugfs.txt"
#define DBG_MAX		4096

/* A copy of the debugfs file @name (below DBG_ROOT), NUL-terminated. */
static char *dbg_read(struct kunit *test, const char *name)
{
	char *text = kunit_kzalloc(test, DBG_MAX, GFP_KERNEL);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	KUNIT_ASSERT_NOT_NULL(test, text);
	KUNIT_ASSERT_EQ_MSG(test, 0,
			    ibpost_test_sh("cat " DBG_ROOT "/%s > " DBG_COPY,
					   name),
			    "cannot read %s/%s", DBG_ROOT, name);
	f = filp_open(DBG_COPY, O_RDONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "cannot open " DBG_COPY);
	n = kernel_read(f, text, DBG_MAX - 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_GT_MSG(test, n, (ssize_t)0, "%s is empty", name);
	text[n] = '\0';
	return text;
}

/* The value of the line "@key value" of @text; fails the case if none. */
static const char *dbg_str(struct kunit *test, const char *text,
			   const char *key)
{
	size_t len = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, key, len) && line[len] == ' ')
			return line + len + 1;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	KUNIT_FAIL_AND_ABORT(test, "no \"%s\" in:\n%s", key, text);
	return NULL;
}

static u64 dbg_val(struct kunit *test, const char *text, const char *key)
{
	const char *v = dbg_str(test, text, key);
	char num[24];
	u64 val;

	strscpy(num, v, min_t(size_t, sizeof(num), strcspn(v, "\n ") + 1));
	KUNIT_ASSERT_EQ_MSG(test, 0, kstrtou64(num, 0, &val),
			    "\"%s\" is not a number: %s", key, num);
	return val;
}

/* Whether the line "@key @val" is in @text. */
static bool dbg_is(struct kunit *test, const char *text, const char *key,
		   const char *val)
{
	const char *v = dbg_str(test, text, key);

	return !strncmp(v, val, strlen(val)) &&
	       (v[strlen(val)] == '\n' || !v[strlen(val)]);
}

/* The QP's own file, "<ibdev>/qp<n>". */
static char *dbg_qp(struct kunit *test, struct ibpost_qp *qp)
{
	char name[48];

	snprintf(name, sizeof(name), "%s/qp%u", ibpost_test_ibdev(),
		 ibpost_qp_ibqp(qp)->qp_num);
	return dbg_read(test, name);
}

static char *dbg_dev(struct kunit *test, const char *file)
{
	char name[48];

	snprintf(name, sizeof(name), "%s/%s", ibpost_test_ibdev(), file);
	return dbg_read(test, name);
}

/* @n 8-byte WRITEs from a, the last one signaled; its completion taken. */
static void dbg_writes(struct kunit *test, struct ibpost_test_pair *p, int n)
{
	struct ibpost_comp comp;
	int i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, 0,
				ibpost_post_write(p->a, CTX(i), p->abuf.buf, 8,
						  p->abuf.mr,
						  i == n - 1 ? IB_SEND_SIGNALED : 0,
						  ibpost_mr_remote_addr(p->bw.mr),
						  ibpost_mr_rkey(p->bw.mr)));
	ibpost_test_send_comp(test, p->a, &comp);
	KUNIT_EXPECT_PTR_EQ(test, CTX(n - 1), comp.context);
	KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, comp.status);
}

/*
 * A QP's file counts what was posted, completed (the unsignaled WRITEs
 * too, once a later signal reclaimed them), forced and refused, and its
 * state; a move to ERR shows, and flushed receives are counted.
 */
static void ibpost_debugfs_qp_counters(struct kunit *test)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ibpost_sge many[8];
	struct ibpost_test_pair *p;
	struct ibpost_qp_attr attr;
	struct ibpost_comp comp;
	char *t;
	int i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	attr.signal_interval = 4;
	p = ibpost_test_pair(test, &attr);
	t = dbg_qp(test, p->a);
	KUNIT_EXPECT_TRUE(test, dbg_is(test, t, "type", "RC"));
	KUNIT_EXPECT_TRUE(test, dbg_is(test, t, "state", "RTS"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "send_posted"));
	KUNIT_EXPECT_EQ(test, (u64)p->got.max_send_wr,
			dbg_val(test, t, "send_depth"));
	KUNIT_EXPECT_EQ(test, (u64)p->got.max_recv_wr,
			dbg_val(test, t, "recv_depth"));

	/* Refused before the provider: one SGE more than granted. */
	for (i = 0; i < ARRAY_SIZE(many); i++) {
		many[i].addr = p->abuf.buf;
		many[i].length = 8;
		many[i].mr = p->abuf.mr;
	}
	KUNIT_ASSERT_LT(test, p->got.max_send_sge, (u32)ARRAY_SIZE(many));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			ibpost_post_sendv(p->a, NULL, many,
					  p->got.max_send_sge + 1, 0));
	/* 5 unsignaled WRITEs (the 4th forced), then a signaled one. */
	dbg_writes(test, p, 6);
	t = dbg_qp(test, p->a);
	KUNIT_EXPECT_EQ(test, 6ULL, dbg_val(test, t, "send_posted"));
	KUNIT_EXPECT_EQ(test, 6ULL, dbg_val(test, t, "send_completed"));
	KUNIT_EXPECT_EQ(test, 1ULL, dbg_val(test, t, "send_forced_signals"));
	KUNIT_EXPECT_EQ(test, 1ULL, dbg_val(test, t, "send_refused_einval"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "send_failed"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "send_in_use"));

	/* Two receives, then ERR: both flushed, the state shows it. */
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->a, CTX(10 + i),
							  p->abuf.buf + 64 * i,
							  64, p->abuf.mr));
	t = dbg_qp(test, p->a);
	KUNIT_EXPECT_EQ(test, 2ULL, dbg_val(test, t, "recv_in_use"));
	KUNIT_ASSERT_EQ(test, 0, ibpost_qp_modify(p->a, &qa, IB_QP_STATE));
	for (i = 0; i < 2; i++)
		ibpost_test_recv_comp(test, p->a, &comp);
	t = dbg_qp(test, p->a);
	KUNIT_EXPECT_TRUE(test, dbg_is(test, t, "state", "ERR"));
	KUNIT_EXPECT_EQ(test, 2ULL, dbg_val(test, t, "recv_posted"));
	KUNIT_EXPECT_EQ(test, 2ULL, dbg_val(test, t, "recv_flushed"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "recv_completed"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "recv_in_use"));
}

/*
 * Refusals by errno: a QP never connected (RESET) refuses sends and
 * receives with -ENOTCONN; a full receive queue refuses with -ENOMEM.
 */
static void ibpost_debugfs_refusals_by_errno(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	char *t;
	u32 i;

	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_test_qp(test, dev, &attr);
	KUNIT_EXPECT_EQ(test, -ENOTCONN,
			ibpost_post_send(qp, NULL, p->abuf.buf, 8, p->abuf.mr,
					 0));
	KUNIT_EXPECT_EQ(test, -ENOTCONN,
			ibpost_post_recv(qp, NULL, p->abuf.buf, 8, p->abuf.mr));
	t = dbg_qp(test, qp);
	KUNIT_EXPECT_TRUE(test, dbg_is(test, t, "state", "RESET"));
	KUNIT_EXPECT_EQ(test, 1ULL, dbg_val(test, t, "send_refused_enotconn"));
	KUNIT_EXPECT_EQ(test, 1ULL, dbg_val(test, t, "recv_refused_enotconn"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "send_posted"));
	KUNIT_EXPECT_EQ(test, 0ULL, dbg_val(test, t, "recv_posted"));

	for (i = 0; i < p->got.max_recv_wr; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(i),
							  p->bbuf.buf, 8,
							  p->bbuf.mr));
	KUNIT_EXPECT_EQ(test, -ENOMEM,
			ibpost_post_recv(p->b, NULL, p->bbuf.buf, 8,
					 p->bbuf.mr));
	t = dbg_qp(test, p->b);
	KUNIT_EXPECT_EQ(test, 1ULL, dbg_val(test, t, "recv_refused_enomem"));
	KUNIT_EXPECT_EQ(test, (u64)p->got.max_recv_wr,
			dbg_val(test, t, "recv_in_use"));
	KUNIT_EXPECT_EQ(test, (u64)p->got.max_recv_wr,
			dbg_val(test, t, "recv_posted"));
}

/* The "qpn <n> type RC sq <used>/<depth> ..." line of @qp, or NULL. */
static const char *dbg_qps_line(const char *text, struct ibpost_qp *qp)
{
	char key[24];
	const char *line;

	snprintf(key, sizeof(key), "qpn %u ", ibpost_qp_ibqp(qp)->qp_num);
	line = strstr(text, key);
	while (line && line != text && line[-1] != '\n')
		line = strstr(line + 1, key);
	return line;
}

/*
 * The device's files: "devices" lists it with its QP count, "qps" has a
 * line per QP with its slots in use, "stats" sums the counters of the
 * live QPs and of those destroyed since the device appeared.
 */
static void ibpost_debugfs_device_files(struct kunit *test)
{
	struct ibpost_test_pair *p = ibpost_test_pair(test, NULL);
	u64 qps, posted, completed, recv_in_use;
	const char *line, *type;
	char *t, want[64];
	int i;

	t = dbg_dev(test, "stats");
	qps = dbg_val(test, t, "qps");
	posted = dbg_val(test, t, "send_posted");
	completed = dbg_val(test, t, "send_completed");
	recv_in_use = dbg_val(test, t, "recv_in_use");
	KUNIT_EXPECT_GE(test, qps, 2ULL);
	snprintf(want, sizeof(want), "%s qps %llu\n", ibpost_test_ibdev(), qps);
	t = dbg_read(test, "devices");
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(t, want), "no \"%s\" in:\n%s",
				  want, t);

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 0, ibpost_post_recv(p->b, CTX(i),
							  p->bbuf.buf, 64,
							  p->bbuf.mr));
	t = dbg_dev(test, "qps");
	line = dbg_qps_line(t, p->b);
	KUNIT_ASSERT_NOT_NULL_MSG(test, line, "QP %u not in:\n%s",
				  ibpost_qp_ibqp(p->b)->qp_num, t);
	snprintf(want, sizeof(want), "type RC sq 0/%u rq 3/%u\n",
		 p->got.max_send_wr, p->got.max_recv_wr);
	type = strstr(line, "type ");
	KUNIT_ASSERT_NOT_NULL_MSG(test, type, "no type in \"%s\"", line);
	KUNIT_EXPECT_EQ_MSG(test, 0, strncmp(type, want, strlen(want)),
			    "\"%s\" is not \"%s\"", line, want);

	dbg_writes(test, p, 4);
	/* Destroyed, a's counters stay in the device's sums. */
	ibpost_qp_destroy(p->a);
	p->a = NULL;
	t = dbg_dev(test, "stats");
	KUNIT_EXPECT_EQ(test, qps - 1, dbg_val(test, t, "qps"));
	KUNIT_EXPECT_EQ(test, posted + 4, dbg_val(test, t, "send_posted"));
	KUNIT_EXPECT_EQ(test, completed + 4,
			dbg_val(test, t, "send_completed"));
	/* Other QPs of the device may hold receives: count b's three. */
	KUNIT_EXPECT_EQ(test, recv_in_use + 3,
			dbg_val(test, t, "recv_in_use"));
}

/* A destroyed QP's file is gone with it. */
static void ibpost_debugfs_qp_file_removed(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_qp_attr attr;
	struct ibpost_qp *qp;
	u32 qpn;

	ibpost_test_attr(&attr, IB_QPT_RC);
	qp = ibpost_test_qp(test, dev, &attr);
	qpn = ibpost_qp_ibqp(qp)->qp_num;
	KUNIT_EXPECT_EQ(test, 0, ibpost_test_sh("test -e " DBG_ROOT "/%s/qp%u",
						ibpost_test_ibdev(), qpn));
	ibpost_test_qp_destroy(test, qp);
	KUNIT_EXPECT_NE(test, 0, ibpost_test_sh("test -e " DBG_ROOT "/%s/qp%u",
						ibpost_test_ibdev(), qpn));
}

static struct kunit_case ibpost_debugfs_cases[] = {
	KUNIT_CASE(ibpost_debugfs_qp_counters),
	KUNIT_CASE(ibpost_debugfs_refusals_by_errno),
	KUNIT_CASE(ibpost_debugfs_device_files),
	KUNIT_CASE(ibpost_debugfs_qp_file_removed),
	{}
};

static struct kunit_suite ibpost_debugfs_suite = {
	.name = "ibpost_debugfs",
	.test_cases = ibpost_debugfs_cases,
};

kunit_test_suites(&ibpost_debugfs_suite);
