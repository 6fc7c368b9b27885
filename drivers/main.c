// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost module init and exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/workqueue.h>
#include "qp.h"

/*
 * ibpost's own work items: the flush of WRs posted in ERR, the revocation
 * of dirty READ sinks and the release of orphaned MRs. WQ_MEM_RECLAIM:
 * ULPs destroy QPs from their reclaim work items, and a destroy flushes
 * the first two; flushing a work item of a workqueue without it from such
 * a work item could stall reclaim (the workqueue code warns).
 */
struct workqueue_struct *ibpost_wq;
/*
 * QPs' event work (qp_event.c) takes qp->mutex, under which teardown and
 * RESET flush ibpost_wq's items: a queue of its own, so that neither
 * waits behind the other (one rescuer each under memory pressure).
 */
struct workqueue_struct *ibpost_event_wq;

static int __init ibpost_init(void)
{
	int ret;

	ibpost_wq = alloc_workqueue("ibpost", WQ_MEM_RECLAIM, 0);
	if (!ibpost_wq)
		return -ENOMEM;
	ibpost_event_wq = alloc_workqueue("ibpost_event", WQ_MEM_RECLAIM, 0);
	if (!ibpost_event_wq) {
		destroy_workqueue(ibpost_wq);
		return -ENOMEM;
	}
	ibpost_debugfs_init();
	ret = ibpost_client_init();
	if (ret)
		goto out_debugfs_exit;
	return 0;

out_debugfs_exit:
	ibpost_debugfs_exit();
	destroy_workqueue(ibpost_event_wq);
	destroy_workqueue(ibpost_wq);
	return ret;
}

/*
 * After the client is gone (every QP torn down, every orphaned MR's WR
 * completed): destroy_workqueue() runs the work items still queued.
 */
static void __exit ibpost_exit(void)
{
	ibpost_client_exit();
	ibpost_debugfs_exit();
	destroy_workqueue(ibpost_event_wq);
	destroy_workqueue(ibpost_wq);
}

module_init(ibpost_init);
module_exit(ibpost_exit);

MODULE_AUTHOR("The ibpost authors");
MODULE_DESCRIPTION("Posting layer with exact IBA 11.4.1.1 semantics for in-kernel RDMA consumers");
MODULE_LICENSE("GPL");
/* Shown by modinfo: consumers need MODULE_IMPORT_NS(IBPOST_NS). */
MODULE_INFO(export_ns, "IBPOST");
