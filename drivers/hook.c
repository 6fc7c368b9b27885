// SPDX-License-Identifier: GPL-2.0
/*
 * The test hook, built only into test builds (a kernel with CONFIG_KUNIT).
 *
 * A KUnit suite installs one function that ibpost calls at the points of
 * enum ibpost_hook (hook.h): there it can widen a race window (block
 * until another thread has removed the device) or make "the provider"
 * refuse part of a chain. Elsewhere ibpost_hook() is an empty inline.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <rdma/ibpost.h>
#include "hook.h"

ibpost_hook_fn ibpost_hook_cur;
static void *ibpost_hook_data;
static DEFINE_MUTEX(ibpost_hook_mutex);

int __ibpost_hook(enum ibpost_hook point, void *obj)
{
	ibpost_hook_fn fn = READ_ONCE(ibpost_hook_cur);

	return fn ? fn(point, obj, READ_ONCE(ibpost_hook_data)) : 0;
}

/**
 * ibpost_test_set_hook - install or remove the test hook
 * @fn: called at every hook point with the object concerned and @data;
 *      NULL removes the hook
 * @data: passed to @fn
 *
 * For ibpost's own KUnit suites only; exists in test builds only.
 *
 * Context: Process context. Hook calls at points under a queue lock
 * (SUBMIT, STATE_FROM) must not sleep; the others may. The caller makes
 * sure none is in flight when it removes a hook whose @data it then
 * frees.
 * Return: 0, or -EBUSY when another hook is installed.
 */
int ibpost_test_set_hook(ibpost_hook_fn fn, void *data)
{
	int ret = 0;

	mutex_lock(&ibpost_hook_mutex);
	if (fn && READ_ONCE(ibpost_hook_cur)) {
		ret = -EBUSY;
	} else {
		WRITE_ONCE(ibpost_hook_data, data);
		WRITE_ONCE(ibpost_hook_cur, fn);
	}
	mutex_unlock(&ibpost_hook_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(ibpost_test_set_hook, IBPOST_NS);
