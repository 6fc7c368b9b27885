// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for consumers' error paths, through the kernel's
 * fault-injection framework (Documentation/fault-injection/).
 *
 * The site: every WR a post call accepts after ibpost's own checks (send or
 * receive, any QP; not ibpost's internal registration WRs) asks
 * should_fail(&ibpost_fail_attr, 1) just before it is queued. A WR that
 * should fail is refused with the errno in fail_ibpost/errno, as if the
 * provider had refused it, and the partial-post contract holds: the WRs
 * before it in its chain are queued, *bad_wr names it, nothing after it is
 * queued, and the QP's state is unchanged.
 *
 * /sys/kernel/debug/ibpost/fail_ibpost/ (root only, 0600) holds the
 * framework's knobs, as for failslab: probability, interval, times, space
 * (each WR spends 1), verbose, verbose_ratelimit_*, task-filter (and the
 * stack-trace filters where the kernel has them), plus ibpost's own errno:
 * the negative errno a refused WR gets (-EIO at load). The per-task
 * /proc/<pid>/fail-nth counts this site like any other.
 *
 * should_fail() is not atomic: it reads and then updates times, space and
 * the interval's count separately, so two posters on two CPUs could both
 * take the one failure "times 1" allows, or both skip the Nth WR. Calls
 * are serialized by ibpost_fault_lock; it is taken only by a post that
 * began while something was armed (see ibpost_fault_armed()), when speed
 * does not matter.
 *
 * verbose starts at 0 here, not at the framework's 2: a refusal is
 * recorded by ibpost's own ratelimited line and by the refused-post trace
 * event (rule FAULT_INJECTED), and should_fail() runs with interrupts off
 * under the queue's lock, where a stack dump per refused WR (what verbose
 * 2 prints) would hold every poster for as long as the console takes.
 * Root may still raise it.
 *
 * Consumers' own tests can arm the site exactly with ibpost_fault_inject()
 * (<rdma/ibpost_fault.h>). Without CONFIG_FAULT_INJECTION (Debian's stock
 * kernels) none of this exists: no directory, no check on the post path,
 * and ibpost_fault_inject() returns -EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fault-inject.h>
#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <rdma/ibpost.h>
#include <rdma/ibpost_fault.h>
#include "ibpost_base.h"

#ifdef CONFIG_FAULT_INJECTION

DECLARE_FAULT_ATTR(ibpost_fail_attr);
static DEFINE_SPINLOCK(ibpost_fault_lock);
static int ibpost_fault_errno = -EIO;

static bool ibpost_fault_errno_valid(s64 err)
{
	return err < 0 && err > -MAX_ERRNO;
}

/* A WR passed the checks and ibpost_fault_armed()'s gate is open. */
int __ibpost_fault_check(void)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&ibpost_fault_lock, flags);
	if (should_fail(&ibpost_fail_attr, 1))
		err = ibpost_fault_errno;
	spin_unlock_irqrestore(&ibpost_fault_lock, flags);
	if (err)
		pr_info_ratelimited("fail_ibpost: refusing a WR with %d\n",
				    err);
	return err;
}

/*
 * Fail the @nth call of should_fail() from now on, once. Its exit order
 * (6.1 and 6.12 alike; 6.12 only checks the stack-trace filter earlier,
 * which passes everything with the filter reset as here): probability 0,
 * then task-filter, then times 0 stop it; "space > size" spends size and
 * stops it; interval 1 and probability 100 (> any random value 0..99) let
 * it through. With size 1 and space nth, calls 1..nth-1 bring space down
 * to 1 and call nth fails (space is not spent by a failing call); times 1
 * then drops to 0, which closes ibpost_fault_armed()'s gate. nth 1 fails
 * the next call. nth 0 disarms: probability 0. Both restart the
 * interval's count (not shown in debugfs) from 0.
 */
static int ibpost_fault_arm(unsigned int nth, int err)
{
	struct fault_attr *attr = &ibpost_fail_attr;
	unsigned long flags;

	if (nth > INT_MAX || (nth && !ibpost_fault_errno_valid(err)))
		return -EINVAL;
	spin_lock_irqsave(&ibpost_fault_lock, flags);
	WRITE_ONCE(attr->probability, 0);
	attr->count = 0;
	if (nth) {
		WRITE_ONCE(ibpost_fault_errno, err);
		attr->task_filter = false;
		attr->interval = 1;
		attr->require_start = 0;
		attr->require_end = ULONG_MAX;
		attr->reject_start = 0;
		attr->reject_end = 0;
		atomic_set(&attr->space, nth);
		atomic_set(&attr->times, 1);
		attr->verbose = 0;
		WRITE_ONCE(attr->probability, 100);
	}
	spin_unlock_irqrestore(&ibpost_fault_lock, flags);
	return 0;
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS

static int ibpost_fault_errno_get(void *data, u64 *val)
{
	*val = (s64)READ_ONCE(ibpost_fault_errno);
	return 0;
}

static int ibpost_fault_errno_set(void *data, u64 val)
{
	unsigned long flags;

	if (!ibpost_fault_errno_valid((s64)val))
		return -EINVAL;
	spin_lock_irqsave(&ibpost_fault_lock, flags);
	WRITE_ONCE(ibpost_fault_errno, (s64)val);
	spin_unlock_irqrestore(&ibpost_fault_lock, flags);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(ibpost_fault_errno_fops,
				ibpost_fault_errno_get, ibpost_fault_errno_set,
				"%lld\n");

void ibpost_fault_init(struct dentry *root)
{
	struct dentry *dir;

	ibpost_fail_attr.verbose = 0;
	/* Under an ERR_PTR dir (no debugfs), debugfs makes no errno file. */
	dir = fault_create_debugfs_attr("fail_ibpost", root, &ibpost_fail_attr);
	debugfs_create_file_unsafe("errno", 0600, dir, NULL,
				   &ibpost_fault_errno_fops);
}

/*
 * 6.1's fault_create_debugfs_attr() takes a reference on the directory
 * (attr->dname, named in its log line) that nothing drops; 6.12 keeps the
 * name as a string instead. Drop the reference where it is one. The
 * directory itself goes with ibpost's debugfs root.
 */
void ibpost_fault_exit(void)
{
	if (__same_type(ibpost_fail_attr.dname, struct dentry *))
		dput((struct dentry *)ibpost_fail_attr.dname);
}

#else /* !CONFIG_FAULT_INJECTION_DEBUG_FS: fault_create_debugfs_attr() fails */

void ibpost_fault_init(struct dentry *root)
{
}

void ibpost_fault_exit(void)
{
}

#endif /* CONFIG_FAULT_INJECTION_DEBUG_FS */

#else /* !CONFIG_FAULT_INJECTION */

static int ibpost_fault_arm(unsigned int nth, int err)
{
	return -EOPNOTSUPP;
}

void ibpost_fault_init(struct dentry *root)
{
}

void ibpost_fault_exit(void)
{
}

#endif /* CONFIG_FAULT_INJECTION */

/**
 * ibpost_fault_inject - make a later post fail, for testing error paths
 * @nth: the @nth WR posted from now on (on any QP, send or receive, among
 *       those that pass ibpost's own checks) is refused; 0 disarms
 * @err: the negative errno it is refused with (-MAX_ERRNO < @err < 0);
 *       ignored when @nth is 0
 *
 * The refusal honours the partial-post contract: the WRs before it in its
 * chain are queued, *bad_wr names it, nothing after it is queued, and the
 * QP's state is unchanged. It fires once. A post already under way when
 * it is armed is not affected: its WRs do not count.
 *
 * This arms the fault attribute of /sys/kernel/debug/ibpost/fail_ibpost/:
 * probability 100, interval 1, times 1, space @nth, task-filter and the
 * stack-trace filters off, errno @err; disarming sets probability 0.
 * Both restart the count of ``interval`` from 0, and set verbose 0.
 * Whatever was set there before is overwritten, and a later write there
 * changes what is armed. So does a task's /proc/<pid>/fail-nth firing at
 * this site meanwhile: it spends the attribute's one ``times`` (disarming
 * it) and no ``space``; a test arms one of the two, not both.
 *
 * Context: Any context.
 * Return: 0; -EINVAL for an @err out of range or an @nth above INT_MAX;
 * -EOPNOTSUPP, whatever the arguments, on a kernel without
 * CONFIG_FAULT_INJECTION (such as Debian's stock kernels).
 */
int ibpost_fault_inject(unsigned int nth, int err)
{
	return ibpost_fault_arm(nth, err);
}
EXPORT_SYMBOL_NS_GPL(ibpost_fault_inject, IBPOST_NS);
