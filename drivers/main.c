// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost module init and exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "ibpost_internal.h"

static int __init ibpost_init(void)
{
	int ret;

	ret = ibpost_mr_init();
	if (ret)
		return ret;
	ibpost_debugfs_init();
	ret = ibpost_client_init();
	if (ret)
		goto out_debugfs_exit;
	return 0;

out_debugfs_exit:
	ibpost_debugfs_exit();
	ibpost_mr_exit();
	return ret;
}

static void __exit ibpost_exit(void)
{
	ibpost_client_exit();
	ibpost_debugfs_exit();
	ibpost_mr_exit();
}

module_init(ibpost_init);
module_exit(ibpost_exit);

MODULE_AUTHOR("The ibpost authors");
MODULE_DESCRIPTION("Posting layer with exact IBA 11.4.1.1 semantics for in-kernel RDMA consumers");
MODULE_LICENSE("GPL");
/* Shown by modinfo: consumers need MODULE_IMPORT_NS(IBPOST_NS). */
MODULE_INFO(export_ns, "IBPOST");
