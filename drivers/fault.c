// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for consumers' error paths.
 *
 * /sys/kernel/debug/ibpost/fault_inject (root only, 0600):
 *
 *   echo "N E" > fault_inject   the Nth WR posted from now on (on any QP,
 *                               send or receive, counting WRs that pass
 *                               ibpost's own checks) is refused with -E, as
 *                               if the provider had refused it
 *   echo 0 > fault_inject       disarm
 *   cat fault_inject            "armed <left> errno <E> injected <count>"
 *
 * Consumers' own tests can arm it directly with ibpost_fault_inject().
 *
 * The refusal honours the partial-post contract: the WRs before it in its
 * chain are queued, *bad_wr names it, nothing after it is queued, and the
 * QP's state is unchanged. A static key keeps the post path free of the
 * check while nothing is armed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>
#include "ibpost_internal.h"

DEFINE_STATIC_KEY_FALSE(ibpost_fault_key);
static atomic_t ibpost_fault_left = ATOMIC_INIT(0);
static int ibpost_fault_errno;
static atomic_t ibpost_fault_injected = ATOMIC_INIT(0);
static DEFINE_MUTEX(ibpost_fault_mutex);

/* Called for every WR that passed the checks, with static key enabled. */
int __ibpost_fault_check(void)
{
	if (atomic_read(&ibpost_fault_left) <= 0 ||
	    atomic_dec_return(&ibpost_fault_left) != 0)
		return 0;
	atomic_inc(&ibpost_fault_injected);
	pr_info_ratelimited("fault_inject: refusing a WR with %d\n",
			    -ibpost_fault_errno);
	return -ibpost_fault_errno;
}

/**
 * ibpost_fault_inject - make a later post fail, for testing error paths
 * @nth: the @nth WR posted from now on (on any QP, send or receive, among
 *       those that pass ibpost's own checks) is refused; 0 disarms
 * @err: the negative errno it is refused with (-MAX_ERRNO < @err < 0)
 *
 * The refusal honours the partial-post contract: the WRs before it in its
 * chain are queued, *bad_wr names it, nothing after it is queued, and the
 * QP's state is unchanged. It fires once. The same knob is
 * /sys/kernel/debug/ibpost/fault_inject ("N ERRNO", root only).
 *
 * Context: Process context; may sleep.
 * Return: 0, or -EINVAL for an @err out of range.
 */
int ibpost_fault_inject(unsigned int nth, int err)
{
	if (nth > INT_MAX || (nth && (err >= 0 || err <= -MAX_ERRNO)))
		return -EINVAL;
	mutex_lock(&ibpost_fault_mutex);
	if (static_key_enabled(&ibpost_fault_key))
		static_branch_disable(&ibpost_fault_key);
	ibpost_fault_errno = -err;
	atomic_set(&ibpost_fault_left, nth);
	if (nth)
		static_branch_enable(&ibpost_fault_key);
	mutex_unlock(&ibpost_fault_mutex);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_fault_inject, IBPOST_NS);

static ssize_t fault_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	char buf[32];
	int n = 0, e = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%d %d", &n, &e) < 1 || n < 0 ||
	    ibpost_fault_inject(n, -e)) {
		pr_warn_ratelimited("fault_inject: write \"N ERRNO\" (N > 0, 0 < ERRNO < %d) or \"0\"\n",
				    MAX_ERRNO);
		return -EINVAL;
	}
	return len;
}

static int fault_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "armed %d errno %d injected %d\n",
		   max(atomic_read(&ibpost_fault_left), 0), ibpost_fault_errno,
		   atomic_read(&ibpost_fault_injected));
	return 0;
}

static int fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, fault_show, NULL);
}

static const struct file_operations fault_fops = {
	.owner = THIS_MODULE,
	.open = fault_open,
	.read = seq_read,
	.write = fault_write,
	.llseek = seq_lseek,
	.release = single_release,
};

void ibpost_fault_init(struct dentry *root)
{
	debugfs_create_file("fault_inject", 0600, root, NULL, &fault_fops);
}

void ibpost_fault_exit(void)
{
	if (static_key_enabled(&ibpost_fault_key))
		static_branch_disable(&ibpost_fault_key);
}
