// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device contexts and consumer notification.
 *
 * Operation: ibpost registers an ib_client. Its .add makes a struct
 * ibpost_dev (a kref, a PD) for every ib_device present at load or added
 * later, and announces it to every registered ibpost_client. Where ibpost
 * starts from an ib_device (an rdma_cm_id's), it finds its context as the
 * ib_client's data (ibpost_dev_of()), set once the context is complete.
 *
 * Removal: .remove clears the client data, marks the device REMOVING and
 * takes it off the lookup list, calls every consumer's remove, then tears
 * down every QP still on the device (move to ERR, flush every outstanding
 * WR so each context comes back, destroy; a destroy already under way is
 * waited for), releases every MR and frees the PD, all before the
 * ib_device may go. The struct ibpost_dev itself lives on while consumers
 * hold references; their later posts get -ENODEV, and contexts flushed for
 * a consumer without callbacks wait for ibpost_get_*_comp() until the QP
 * is destroyed.
 *
 * Rename: .rename updates the name ibpost_dev_get() looks for, so a
 * renamed device keeps its handle and is found under its new name only.
 *
 * Serialization: ibpost_client_mutex orders device add/remove against
 * client register/unregister, so every client sees exactly one add and at
 * most one remove per device. ibpost_dev_lock (a spinlock) guards the
 * device list for lookups, which consumers may do from their callbacks,
 * and the reference ibpost_dev_of() takes on the client data it reads.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/seq_file.h>
#include "ibpost_internal.h"
#include "ibpost_trace.h"

static DEFINE_MUTEX(ibpost_client_mutex);
static struct ib_client ibpost_ib_client;
static DEFINE_SPINLOCK(ibpost_dev_lock);
static LIST_HEAD(ibpost_devs);
static LIST_HEAD(ibpost_clients);

void ibpost_dev_release(struct kref *ref)
{
	struct ibpost_dev *dev = container_of(ref, struct ibpost_dev, ref);

	WARN_ON_ONCE(dev->pd || !list_empty(&dev->qps) ||
		     !list_empty(&dev->mrs));
	kfree(dev);
}

/**
 * ibpost_dev_get - look up ibpost's context on an RDMA device by name
 * @ibdev_name: the ib_device's name, e.g. "rxe0"
 *
 * Context: Any context that may take a spinlock.
 * Return: the device with a reference the caller drops with
 * ibpost_dev_put(), or ERR_PTR(-ENODEV) when no such device exists or it
 * is being removed.
 */
struct ibpost_dev *ibpost_dev_get(const char *ibdev_name)
{
	struct ibpost_dev *dev, *found = ERR_PTR(-ENODEV);
	unsigned long flags;

	if (!ibdev_name)
		return found;
	spin_lock_irqsave(&ibpost_dev_lock, flags);
	list_for_each_entry(dev, &ibpost_devs, node) {
		if (!strcmp(dev->name, ibdev_name)) {
			kref_get(&dev->ref);
			found = dev;
			break;
		}
	}
	spin_unlock_irqrestore(&ibpost_dev_lock, flags);
	return found;
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_get, IBPOST_NS);

/**
 * ibpost_dev_put - drop a device reference
 * @dev: from ibpost_dev_get(), or NULL
 *
 * Context: Any context.
 * Return: nothing.
 */
void ibpost_dev_put(struct ibpost_dev *dev)
{
	if (dev)
		kref_put(&dev->ref, ibpost_dev_release);
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_put, IBPOST_NS);

/**
 * ibpost_dev_ibdev - the RDMA device behind an ibpost device
 * @dev: the device
 *
 * Context: Any context.
 * Return: the ib_device, valid until the consumer's remove callback for
 * @dev returns; NULL once the device has been removed.
 */
struct ib_device *ibpost_dev_ibdev(struct ibpost_dev *dev)
{
	return READ_ONCE(dev->ibdev);
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_ibdev, IBPOST_NS);

/**
 * ibpost_dev_pd - ibpost's protection domain on a device
 * @dev: the device
 *
 * Consumers may create address handles and other objects on it; they must
 * destroy them in their remove callback.
 *
 * Context: Any context.
 * Return: the PD, or NULL once the device has been removed.
 */
struct ib_pd *ibpost_dev_pd(struct ibpost_dev *dev)
{
	return READ_ONCE(dev->pd);
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_pd, IBPOST_NS);

/* debugfs "devices": one line per device, under the client lock. */
void ibpost_show_devs(struct seq_file *m)
{
	char name[IB_DEVICE_NAME_MAX];
	struct ibpost_dev *dev;

	mutex_lock(&ibpost_client_mutex);
	list_for_each_entry(dev, &ibpost_devs, node) {
		spin_lock_irq(&ibpost_dev_lock);
		strscpy(name, dev->name, sizeof(name));
		spin_unlock_irq(&ibpost_dev_lock);
		seq_printf(m, "%s qps %u\n", name, READ_ONCE(dev->nr_qps));
	}
	mutex_unlock(&ibpost_client_mutex);
}

/*
 * The ibpost device of @ibdev with a reference, or NULL: ibpost has no
 * context on @ibdev (never added, its add failed, or it is being
 * removed). Found as ibpost's client data on the ib_device itself, never
 * by its name (which a rename changes). The data is read and the
 * reference taken under ibpost_dev_lock: .remove clears the data and then
 * takes that lock before it drops the device list's reference, so data
 * read here always has that reference behind it.
 */
struct ibpost_dev *ibpost_dev_of(struct ib_device *ibdev)
{
	struct ibpost_dev *dev;
	unsigned long flags;

	if (!ibdev)
		return NULL;
	spin_lock_irqsave(&ibpost_dev_lock, flags);
	dev = ib_get_client_data(ibdev, &ibpost_ib_client);
	if (dev)
		kref_get(&dev->ref);
	spin_unlock_irqrestore(&ibpost_dev_lock, flags);
	return dev;
}

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

	/* ib_alloc_pd() credits KBUILD_MODNAME (ibpost) in restrack. */
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		ibdev_warn(ibdev, "ibpost: cannot allocate a PD: %d\n", ret);
		goto out_free_dev;
	}

	mutex_lock(&ibpost_client_mutex);
	spin_lock_irq(&ibpost_dev_lock);
	list_add_tail(&dev->node, &ibpost_devs);
	spin_unlock_irq(&ibpost_dev_lock);
	ibpost_debugfs_add_dev(dev);
	/* Found from the ib_device (ibpost_dev_of()) once complete. */
	ib_set_client_data(ibdev, &ibpost_ib_client, dev);
	list_for_each_entry(client, &ibpost_clients, list)
		if (client->add)
			client->add(dev);
	mutex_unlock(&ibpost_client_mutex);
	ibdev_dbg(ibdev, "ibpost: device added\n");
	trace_ibpost_dev_add(ibdev);
	return 0;

out_free_dev:
	kfree(dev);
	return ret;
}

/* The first QP of @dev that removal has not torn down yet. */
static struct ibpost_qp *ibpost_dev_next_unseen(struct ibpost_dev *dev)
{
	struct ibpost_qp *qp;

	lockdep_assert_held(&dev->qp_lock);
	list_for_each_entry(qp, &dev->qps, node)
		if (!qp->removal_seen)
			return qp;
	return NULL;
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
	struct ibpost_qp *qp;

	trace_ibpost_dev_remove(ibdev);
	mutex_lock(&ibpost_client_mutex);
	/* No ibpost_dev_of() finds it from here on: see there. */
	ib_set_client_data(ibdev, &ibpost_ib_client, NULL);
	set_bit(IBPOST_DEV_REMOVING, &dev->flags);
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
	 * objects; the ibpost_qp shells stay until ibpost_qp_destroy(). A QP
	 * a destroy is tearing down is still listed: its teardown is waited
	 * for. Teardown runs without qp_lock, so that completion callbacks
	 * may deregister MRs meanwhile.
	 */
	for (;;) {
		mutex_lock(&dev->qp_lock);
		qp = ibpost_dev_next_unseen(dev);
		if (!qp)
			break;
		qp->removal_seen = true;
		refcount_inc(&qp->ref);
		mutex_unlock(&dev->qp_lock);
		ibpost_qp_teardown(qp, true);
		ibpost_qp_put(qp);
	}
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
