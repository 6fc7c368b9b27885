// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost's ib_client, and consumer notification.
 *
 * Operation: ibpost registers an ib_client. Its .add makes a struct
 * ibpost_dev (dev.c) for every ib_device present at load or added later,
 * lists it once complete, and announces it to every registered
 * ibpost_client.
 *
 * Removal: .remove marks the device REMOVING and takes it off the device
 * list, calls every consumer's remove, then tears down every QP still on
 * the device (move to ERR, flush every outstanding WR so each context
 * comes back, destroy; a destroy already under way is waited for;
 * removal.c),
 * releases every MR and frees the PD, all before the ib_device may go.
 * The device's later posts get -ENODEV, and contexts flushed for a
 * consumer without callbacks wait for ibpost_get_*_comp() until the QP is
 * destroyed.
 *
 * Rename: .rename updates the name ibpost_dev_get() looks for.
 *
 * Events: each listed device has an ib_event_handler; ib_core calls it
 * under the device's event handler rwsem, and it queues the event (with
 * a device reference) for a work item that tells every registered client
 * under ibpost_client_mutex, unless the device is being removed by then.
 * .remove unregisters the handler first.
 *
 * Serialization: ibpost_client_mutex orders device add/remove against
 * client register/unregister, so every client sees exactly one add and at
 * most one remove per device; the device list changes under it and under
 * ibpost_dev_lock (dev.c), so that walks under either see it whole.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "dev.h"
#include "qp.h"
#include "mr.h"
#include "ibpost_trace.h"

static DEFINE_MUTEX(ibpost_client_mutex);
static struct ib_client ibpost_ib_client;
static LIST_HEAD(ibpost_clients);

/**
 * ibpost_register_client - ask to be told about RDMA devices
 * @client: the consumer's client; @client->add is called at once for every
 *          present device, later for every new one
 *
 * Context: Process context; may sleep. Not from an ibpost_client callback.
 * Return: 0, or -EINVAL when @client lacks a name.
 */
int ibpost_register_client(struct ibpost_client *client)
{
	struct ibpost_dev *dev;

	if (!client || !client->name)
		return -EINVAL;
	mutex_lock(&ibpost_client_mutex);
	list_add_tail(&client->list, &ibpost_clients);
	if (client->add)
		list_for_each_entry(dev, &ibpost_devs, node)
			client->add(dev);
	mutex_unlock(&ibpost_client_mutex);
	pr_debug("client %s registered\n", client->name);
	trace_ibpost_client_register(client->name);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_register_client, IBPOST_NS);

/**
 * ibpost_unregister_client - stop hearing about RDMA devices
 * @client: a registered client; @client->remove is called for every
 *          present device before this returns
 *
 * Context: Process context; may sleep. Not from an ibpost_client callback.
 * Return: nothing.
 */
void ibpost_unregister_client(struct ibpost_client *client)
{
	struct ibpost_dev *dev;

	mutex_lock(&ibpost_client_mutex);
	if (client->remove)
		list_for_each_entry_reverse(dev, &ibpost_devs, node)
			client->remove(dev);
	list_del(&client->list);
	mutex_unlock(&ibpost_client_mutex);
	pr_debug("client %s unregistered\n", client->name);
	trace_ibpost_client_unregister(client->name);
}
EXPORT_SYMBOL_NS_GPL(ibpost_unregister_client, IBPOST_NS);

/**
 * struct ibpost_dev_event - one device event on its way to the clients
 * @work: runs ibpost_dev_event_work() on ibpost_event_wq
 * @dev: the device (a reference held)
 * @event: the event, copied
 */
struct ibpost_dev_event {
	struct work_struct work;
	struct ibpost_dev *dev;
	struct ib_event event;
};

/* A device's asynchronous event, to every client (see the head). */
static void ibpost_dev_event_work(struct work_struct *work)
{
	struct ibpost_dev_event *de = container_of(work,
						   struct ibpost_dev_event,
						   work);
	struct ibpost_client *client;

	mutex_lock(&ibpost_client_mutex);
	if (!test_bit(IBPOST_DEV_REMOVING, &de->dev->flags))
		list_for_each_entry(client, &ibpost_clients, list)
			if (client->event)
				client->event(de->dev, &de->event);
	mutex_unlock(&ibpost_client_mutex);
	ibpost_dev_put(de->dev);
	kfree(de);
}

/*
 * ib_core's call, its event handler rwsem held: that rwsem is taken
 * under rtnl_mutex elsewhere, and removal takes dev->qp_lock (which a
 * QP's creation holds over provider calls that may take rtnl_mutex)
 * under ibpost_client_mutex; so the clients are told from a work item.
 */
static void ibpost_dev_event(struct ib_event_handler *handler,
			     struct ib_event *event)
{
	struct ibpost_dev *dev = container_of(handler, struct ibpost_dev,
					      event_handler);
	struct ibpost_dev_event *de = kmalloc(sizeof(*de), GFP_ATOMIC);

	if (!de)
		return;
	INIT_WORK(&de->work, ibpost_dev_event_work);
	kref_get(&dev->ref);
	de->dev = dev;
	de->event = *event;
	queue_work(ibpost_event_wq, &de->work);
}

static int ibpost_add_one(struct ib_device *ibdev)
{
	struct ibpost_client *client;
	struct ibpost_dev *dev;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	kref_init(&dev->ref);
	mutex_init(&dev->qp_lock);
	INIT_LIST_HEAD(&dev->node);
	INIT_LIST_HEAD(&dev->qps);
	spin_lock_init(&dev->mr_lock);
	INIT_LIST_HEAD(&dev->mrs);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	dev->ibdev = ibdev;
	dev->iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	dev->nr_vecs = max(ibdev->num_comp_vectors, 1);
	dev->vec_qps = kcalloc(dev->nr_vecs, sizeof(*dev->vec_qps), GFP_KERNEL);
	if (!dev->vec_qps) {
		ret = -ENOMEM;
		goto out_free_dev;
	}

	/* ib_alloc_pd() credits KBUILD_MODNAME (ibpost) in restrack. */
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		ibdev_warn(ibdev, "ibpost: cannot allocate a PD: %d\n", ret);
		goto out_free_dev;
	}

	mutex_lock(&ibpost_client_mutex);
	ibpost_debugfs_add_dev(dev);
	/* Handed back to .remove and .rename. */
	ib_set_client_data(ibdev, &ibpost_ib_client, dev);
	/* Found by ibpost_dev_get() and ibpost_dev_of() once complete. */
	spin_lock_irq(&ibpost_dev_lock);
	list_add_tail(&dev->node, &ibpost_devs);
	spin_unlock_irq(&ibpost_dev_lock);
	list_for_each_entry(client, &ibpost_clients, list)
		if (client->add)
			client->add(dev);
	mutex_unlock(&ibpost_client_mutex);
	INIT_IB_EVENT_HANDLER(&dev->event_handler, ibdev, ibpost_dev_event);
	ib_register_event_handler(&dev->event_handler);
	ibdev_dbg(ibdev, "ibpost: device added\n");
	trace_ibpost_dev_add(ibdev);
	return 0;

out_free_dev:
	kfree(dev->vec_qps);
	kfree(dev);
	return ret;
}

static void ibpost_rename_one(struct ib_device *ibdev, void *client_data)
{
	struct ibpost_dev *dev = client_data;

	spin_lock_irq(&ibpost_dev_lock);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	spin_unlock_irq(&ibpost_dev_lock);
	ibpost_debugfs_rename_dev(dev, dev_name(&ibdev->dev));
	ibdev_dbg(ibdev, "ibpost: device renamed\n");
}

static void ibpost_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ibpost_dev *dev = client_data;
	struct ibpost_client *client;

	trace_ibpost_dev_remove(ibdev);
	/* No event is queued for the device after this. */
	ib_unregister_event_handler(&dev->event_handler);
	mutex_lock(&ibpost_client_mutex);
	set_bit(IBPOST_DEV_REMOVING, &dev->flags);
	/* No lookup finds it from here on (dev.c). */
	spin_lock_irq(&ibpost_dev_lock);
	list_del_init(&dev->node);
	spin_unlock_irq(&ibpost_dev_lock);
	list_for_each_entry_reverse(client, &ibpost_clients, list)
		if (client->remove)
			client->remove(dev);
	ibpost_debugfs_remove_dev(dev);
	mutex_unlock(&ibpost_client_mutex);

	/*
	 * QPs the consumers left behind: flush and destroy the provider's
	 * objects (removal.c).
	 */
	ibpost_dev_teardown_qps(dev);
	/* Every MR, those being registered or deregistered included. */
	ibpost_dev_release_mrs(dev);
	ib_dealloc_pd(dev->pd);
	WRITE_ONCE(dev->pd, NULL);
	WRITE_ONCE(dev->ibdev, NULL);
	mutex_unlock(&dev->qp_lock);
	ibdev_dbg(ibdev, "ibpost: device removed\n");
	ibpost_dev_put(dev);
}

static struct ib_client ibpost_ib_client = {
	.name = "ibpost",
	.add = ibpost_add_one,
	.remove = ibpost_remove_one,
	.rename = ibpost_rename_one,
};

int ibpost_client_init(void)
{
	return ib_register_client(&ibpost_ib_client);
}

void ibpost_client_exit(void)
{
	ib_unregister_client(&ibpost_ib_client);
}
