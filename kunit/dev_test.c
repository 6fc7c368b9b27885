// SPDX-License-Identifier: GPL-2.0
/*
 * Suite ibpost_dev: devices seen through ibpost's ib_client and consumer
 * notification, on the live device.
 */
#include <linux/module.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include "ibpost_test.h"

static void ibpost_dev_get_finds_test_device(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);

	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	KUNIT_EXPECT_STREQ(test, dev_name(&ibdev->dev), ibpost_test_ibdev());
	KUNIT_ASSERT_NOT_NULL(test, ibpost_dev_pd(dev));
	KUNIT_EXPECT_PTR_EQ(test, ibpost_dev_pd(dev)->device, ibdev);
}

static void ibpost_dev_get_unknown_is_enodev(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, -ENODEV, PTR_ERR(ibpost_dev_get("ibpost_none0")));
	KUNIT_EXPECT_EQ(test, -ENODEV, PTR_ERR(ibpost_dev_get("")));
	KUNIT_EXPECT_EQ(test, -ENODEV, PTR_ERR(ibpost_dev_get(NULL)));
}

static void ibpost_dev_get_takes_a_reference(struct kunit *test)
{
	struct ibpost_dev *a = ibpost_test_dev(test);
	struct ibpost_dev *b = ibpost_test_dev(test);

	/* Two lookups, one context; each put at exit must be balanced. */
	KUNIT_EXPECT_PTR_EQ(test, a, b);
}

/* The same context from the ib_device, with a reference of its own. */
static void ibpost_dev_get_by_ibdev_finds_test_device(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ibpost_dev *found;

	found = ibpost_dev_get_by_ibdev(ibpost_dev_ibdev(dev));
	KUNIT_ASSERT_PTR_EQ(test, found, dev);
	ibpost_dev_put(found);
	KUNIT_EXPECT_EQ(test, -ENODEV,
			PTR_ERR(ibpost_dev_get_by_ibdev(NULL)));
}

/* A consumer that counts the callbacks it gets for the test device. */
static struct ibpost_test_client {
	struct ibpost_client client;
	int adds, removes, others;
	struct ibpost_dev *added;
} tclient;

static bool ibpost_test_is_test_dev(struct ibpost_dev *dev)
{
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);

	return ibdev && !strcmp(dev_name(&ibdev->dev), ibpost_test_ibdev());
}

static void ibpost_test_client_add(struct ibpost_dev *dev)
{
	if (ibpost_test_is_test_dev(dev)) {
		tclient.adds++;
		tclient.added = dev;
	} else {
		tclient.others++;
	}
}

static void ibpost_test_client_remove(struct ibpost_dev *dev)
{
	if (ibpost_test_is_test_dev(dev))
		tclient.removes++;
}

static void ibpost_register_client_sees_add_and_remove(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);

	memset(&tclient, 0, sizeof(tclient));
	tclient.client.name = "ibpost_kunit";
	tclient.client.add = ibpost_test_client_add;
	tclient.client.remove = ibpost_test_client_remove;

	KUNIT_ASSERT_EQ(test, 0, ibpost_register_client(&tclient.client));
	KUNIT_EXPECT_EQ(test, 1, tclient.adds);
	KUNIT_EXPECT_PTR_EQ(test, dev, tclient.added);
	KUNIT_EXPECT_EQ(test, 0, tclient.removes);
	ibpost_unregister_client(&tclient.client);
	KUNIT_EXPECT_EQ(test, 1, tclient.adds);
	KUNIT_EXPECT_EQ(test, 1, tclient.removes);
}

static void ibpost_register_client_without_name_is_einval(struct kunit *test)
{
	struct ibpost_client nameless = {};

	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_register_client(&nameless));
	KUNIT_EXPECT_EQ(test, -EINVAL, ibpost_register_client(NULL));
}

/*
 * A device's asynchronous event (IB_EVENT_PORT_ACTIVE, dispatched as a
 * provider does, through ib_core) reaches a registered client once, in
 * process context, with ibpost's context of that device; after the
 * client unregisters, a second event does not.
 */
static struct {
	struct ibpost_client client;
	struct ibpost_dev *dev;
	int calls;
	bool atomic;
	struct completion got;
} evclient;

static void ibpost_test_client_event(struct ibpost_dev *dev,
				     const struct ib_event *event)
{
	if (dev != evclient.dev || event->event != IB_EVENT_PORT_ACTIVE)
		return;
	evclient.calls++;
	evclient.atomic |= !in_task() || softirq_count() || irqs_disabled();
	complete(&evclient.got);
}

static void ibpost_dev_event_reaches_client(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct ib_event ev = {
		.device = ibdev,
		.event = IB_EVENT_PORT_ACTIVE,
		.element.port_num = rdma_start_port(ibdev),
	};
	bool got;

	memset(&evclient, 0, sizeof(evclient));
	init_completion(&evclient.got);
	evclient.dev = dev;
	evclient.client.name = "ibpost_kunit_events";
	evclient.client.event = ibpost_test_client_event;
	KUNIT_ASSERT_EQ(test, 0, ibpost_register_client(&evclient.client));
	ib_dispatch_event(&ev);
	got = wait_for_completion_timeout(&evclient.got, 5 * HZ);
	ibpost_unregister_client(&evclient.client);
	KUNIT_EXPECT_TRUE_MSG(test, got, "no event within 5 s");
	ib_dispatch_event(&ev);
	/* ib_core dispatches from its workqueue: time for a stray one. */
	msleep(500);
	KUNIT_EXPECT_EQ(test, 1, evclient.calls);
	KUNIT_EXPECT_FALSE(test, evclient.atomic);
}

/*
 * A client whose add blocks holds up no other client: a second client
 * registers and is told of the device while the first one's add is still
 * blocked (the second add records that it saw it blocked), and hears of a
 * device event meanwhile too (the same); the first hears of it once its
 * add is over. A second registration of a client is refused; each is told
 * remove once at its unregistration.
 */
static struct {
	struct ibpost_client client;
	struct ibpost_dev *dev;
	struct completion entered, release, done, event;
	bool in_add;
	int ret, removes, events;
	bool event_in_add;
} slowc;

static struct {
	struct ibpost_client client;
	struct ibpost_dev *dev;
	struct completion event;
	int adds, removes, events;
	bool saw_slow_blocked, event_saw_slow_blocked;
} fastc;

static void ibpost_test_slow_event(struct ibpost_dev *dev,
				   const struct ib_event *event)
{
	if (dev != slowc.dev || event->event != IB_EVENT_PORT_ACTIVE)
		return;
	slowc.events++;
	slowc.event_in_add |= READ_ONCE(slowc.in_add);
	complete(&slowc.event);
}

static void ibpost_test_fast_event(struct ibpost_dev *dev,
				   const struct ib_event *event)
{
	if (dev != fastc.dev || event->event != IB_EVENT_PORT_ACTIVE)
		return;
	fastc.events++;
	fastc.event_saw_slow_blocked = READ_ONCE(slowc.in_add);
	complete(&fastc.event);
}

static void ibpost_test_slow_add(struct ibpost_dev *dev)
{
	if (dev != slowc.dev)
		return;
	WRITE_ONCE(slowc.in_add, true);
	complete(&slowc.entered);
	wait_for_completion_timeout(&slowc.release, 10 * HZ);
	WRITE_ONCE(slowc.in_add, false);
}

static void ibpost_test_slow_remove(struct ibpost_dev *dev)
{
	if (dev == slowc.dev)
		slowc.removes++;
}

static void ibpost_test_fast_add(struct ibpost_dev *dev)
{
	if (dev != fastc.dev)
		return;
	fastc.adds++;
	fastc.saw_slow_blocked = READ_ONCE(slowc.in_add);
}

static void ibpost_test_fast_remove(struct ibpost_dev *dev)
{
	if (dev == fastc.dev)
		fastc.removes++;
}

static int ibpost_test_slow_register(void *unused)
{
	slowc.ret = ibpost_register_client(&slowc.client);
	kthread_complete_and_exit(&slowc.done, 0);
}

static void ibpost_slow_client_stalls_no_other(struct kunit *test)
{
	struct ibpost_dev *dev = ibpost_test_dev(test);
	struct ib_device *ibdev = ibpost_dev_ibdev(dev);
	struct ib_event ev = {
		.device = ibdev,
		.event = IB_EVENT_PORT_ACTIVE,
		.element.port_num = rdma_start_port(ibdev),
	};
	bool entered, done, fast_event, slow_event;
	struct task_struct *t;

	memset(&slowc, 0, sizeof(slowc));
	memset(&fastc, 0, sizeof(fastc));
	init_completion(&slowc.entered);
	init_completion(&slowc.release);
	init_completion(&slowc.done);
	init_completion(&slowc.event);
	init_completion(&fastc.event);
	slowc.dev = dev;
	slowc.client.name = "ibpost_kunit_slow";
	slowc.client.add = ibpost_test_slow_add;
	slowc.client.remove = ibpost_test_slow_remove;
	slowc.client.event = ibpost_test_slow_event;
	fastc.dev = dev;
	fastc.client.name = "ibpost_kunit_fast";
	fastc.client.add = ibpost_test_fast_add;
	fastc.client.remove = ibpost_test_fast_remove;
	fastc.client.event = ibpost_test_fast_event;

	t = kthread_run(ibpost_test_slow_register, NULL, "ibpost-slowclient");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	entered = wait_for_completion_timeout(&slowc.entered, 5 * HZ);
	KUNIT_EXPECT_EQ(test, 0, ibpost_register_client(&fastc.client));
	KUNIT_EXPECT_EQ(test, -EBUSY, ibpost_register_client(&fastc.client));
	ib_dispatch_event(&ev);
	fast_event = wait_for_completion_timeout(&fastc.event, 5 * HZ);
	complete_all(&slowc.release);
	done = wait_for_completion_timeout(&slowc.done, 20 * HZ);
	KUNIT_EXPECT_TRUE_MSG(test, done, "the slow registration hangs");
	if (!done)
		wait_for_completion(&slowc.done);
	slow_event = wait_for_completion_timeout(&slowc.event, 5 * HZ);
	KUNIT_EXPECT_TRUE_MSG(test, entered, "the slow add never ran");
	KUNIT_EXPECT_EQ(test, 1, fastc.adds);
	KUNIT_EXPECT_TRUE_MSG(test, fastc.saw_slow_blocked,
			      "the second add waited for the first");
	KUNIT_EXPECT_TRUE_MSG(test, fast_event, "no event within 5 s");
	KUNIT_EXPECT_TRUE_MSG(test, fastc.event_saw_slow_blocked,
			      "the event waited for the first client's add");
	KUNIT_EXPECT_TRUE_MSG(test, slow_event,
			      "the first client never heard of the event");
	KUNIT_EXPECT_EQ(test, 1, fastc.events);
	KUNIT_EXPECT_EQ(test, 1, slowc.events);
	KUNIT_EXPECT_FALSE_MSG(test, slowc.event_in_add,
			       "the first client heard of the event inside its add");
	ibpost_unregister_client(&fastc.client);
	KUNIT_EXPECT_EQ(test, 1, fastc.removes);
	KUNIT_EXPECT_EQ(test, 0, slowc.ret);
	if (!slowc.ret)
		ibpost_unregister_client(&slowc.client);
	KUNIT_EXPECT_EQ(test, 1, slowc.removes);
}

static struct kunit_case ibpost_dev_cases[] = {
	KUNIT_CASE(ibpost_dev_get_finds_test_device),
	KUNIT_CASE(ibpost_dev_get_unknown_is_enodev),
	KUNIT_CASE(ibpost_dev_get_takes_a_reference),
	KUNIT_CASE(ibpost_dev_get_by_ibdev_finds_test_device),
	KUNIT_CASE(ibpost_register_client_sees_add_and_remove),
	KUNIT_CASE(ibpost_register_client_without_name_is_einval),
	KUNIT_CASE(ibpost_dev_event_reaches_client),
	KUNIT_CASE(ibpost_slow_client_stalls_no_other),
	{}
};

static struct kunit_suite ibpost_dev_suite = {
	.name = "ibpost_dev",
	.test_cases = ibpost_dev_cases,
};

kunit_test_suites(&ibpost_dev_suite);
