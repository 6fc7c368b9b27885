// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_demo: a small ULP that uses only ibpost's exported symbols, as any
 * consumer would. On load it finds the device named by "ibdev" (rxe0 by
 * default), creates a loopback RC pair and a UD QP on it, and prints a
 * short report of what ibpost granted; the guest's init script then shows
 * ibpost's debugfs view of its devices and QPs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/ibpost.h>

static char *ibdev = "rxe0";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "RDMA device to run the demo on (default rxe0)");

static struct ibpost_dev *demo_dev;
static struct ibpost_qp *demo_a, *demo_b, *demo_ud;

static void demo_report_qp(const char *what, struct ibpost_qp *qp)
{
	struct ibpost_qp_attr got;

	ibpost_qp_get_attr(qp, &got);
	pr_info("%-10s qpn %-4u send_wr %u recv_wr %u send_sge %u inline %u signal every %u\n",
		what, ibpost_qp_ibqp(qp)->qp_num, got.max_send_wr,
		got.max_recv_wr, got.max_send_sge, got.max_inline_data,
		got.signal_interval);
}

static int __init demo_init(void)
{
	struct ibpost_qp_attr attr = {
		.qp_type = IB_QPT_RC,
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 2, .max_recv_sge = 2,
		.max_inline_data = 64,
		.poll_ctx = IB_POLL_SOFTIRQ,
	};
	int ret;

	pr_info("==== ibpost demo on %s ====\n", ibdev);
	demo_dev = ibpost_dev_get(ibdev);
	if (IS_ERR(demo_dev)) {
		pr_err("no ibpost device %s: %ld\n", ibdev, PTR_ERR(demo_dev));
		return PTR_ERR(demo_dev);
	}
	demo_a = ibpost_qp_create(demo_dev, &attr);
	if (IS_ERR(demo_a)) {
		ret = PTR_ERR(demo_a);
		goto out_put_dev;
	}
	demo_b = ibpost_qp_create(demo_dev, &attr);
	if (IS_ERR(demo_b)) {
		ret = PTR_ERR(demo_b);
		goto out_destroy_a;
	}
	ret = ibpost_qp_connect_loopback(demo_a, demo_b);
	if (ret)
		goto out_destroy_b;
	attr.qp_type = IB_QPT_UD;
	attr.qkey = 0x1234;
	demo_ud = ibpost_qp_create(demo_dev, &attr);
	if (IS_ERR(demo_ud)) {
		ret = PTR_ERR(demo_ud);
		goto out_destroy_b;
	}
	pr_info("loopback RC pair connected (RTS), UD QP ready (RTS, qkey 0x1234)\n");
	demo_report_qp("RC a", demo_a);
	demo_report_qp("RC b", demo_b);
	demo_report_qp("UD", demo_ud);
	return 0;

out_destroy_b:
	ibpost_qp_destroy(demo_b);
out_destroy_a:
	ibpost_qp_destroy(demo_a);
out_put_dev:
	ibpost_dev_put(demo_dev);
	pr_err("demo failed: %d\n", ret);
	return ret;
}

static void __exit demo_exit(void)
{
	ibpost_qp_destroy(demo_ud);
	ibpost_qp_destroy(demo_b);
	ibpost_qp_destroy(demo_a);
	ibpost_dev_put(demo_dev);
	pr_info("==== ibpost demo done ====\n");
}

module_init(demo_init);
module_exit(demo_exit);

MODULE_DESCRIPTION("ibpost demo ULP: a consumer of ibpost's exported API");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST);
