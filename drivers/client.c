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
 * a device reference) for a work item that hands a copy to each client
 * with an event callback, on that client's own queue; each client's work
 * item tells them, in order, under the client's lock, if the client was
 * told of the device and the device is not being removed. .remove
 * unregisters the handler first.
 *
 * Serialization: no lock is shared by all clients' callbacks. Each client
 * has its own (struct ibpost_client_state's @lock), held across each of
 * its callbacks, and the list of devices it was told of: a device's
 * arrival and a client's registration both try to tell it, whichever
 * sees the other listed, and the list makes it once; a device's removal
 * and a client's unregistration both tell it gone, once. The walks over
 * clients and devices drop the list locks between steps (a cursor on
 * increasing sequence numbers, each step holding a use of the client or
 * a reference on the device), so a client's slow callback holds up only
 * its own client. ibpost_clients_lock guards the client list; device
 * listing takes it too, to order the devices' debugfs directories.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "dev.h"
#include "qp.h"
#include "mr.h"
#include "ibpost_trace.h"

static struct ib_client ibpost_ib_client;
static void ibpost_client_event_work(struct work_struct *work);
struct ibpost_client_state;
static void ibpost_client_close_events(struct ibpost_client_state *st);

/**
 * struct ibpost_client_state - ibpost's side of one registered client
 * @client: the consumer's client
 * @node: entry in ibpost_clients, in registration order
 * @seq: registration number, increasing: the walks' cursor
 * @lock: this client's callbacks, one at a time, and @devs and @going
 * @devs: the devices the client was told of by add and not yet by remove
 * @going: unregistration has begun: no add after it
 * @uses: one for the registration, one per walk holding the client
 * @unused: completed when @uses drops to zero
 * @events_lock: guards @events and @events_closed (interrupts off)
 * @events: device events waiting for @event_work (struct ibpost_dev_event)
 * @events_closed: unregistration has begun: no event is queued
 * @event_work: tells @events to the client, in order, under @lock
 */
struct ibpost_client_state {
	struct ibpost_client *client;
	struct list_head node;
	u64 seq;
	struct mutex lock;	/* see the kernel-doc above */
	struct list_head devs;
	bool going;
	refcount_t uses;
	struct completion unused;
	spinlock_t events_lock;	/* see the kernel-doc above */
	struct list_head events;
	bool events_closed;
	struct work_struct event_work;
};

/* One device a client was told of (struct ibpost_client_state's @devs). */
struct ibpost_client_dev {
	struct list_head node;
	struct ibpost_dev *dev;
};

/*
 * ibpost_clients_lock: the client list and both sequence counters; device
 * listing and unlisting and the devices' debugfs directories. Never held
 * across a consumer's callback.
 */
static DEFINE_MUTEX(ibpost_clients_lock);
static LIST_HEAD(ibpost_clients);
static u64 ibpost_client_seq;
static u64 ibpost_dev_seq;

/*
 * The client registered next after @from (or, @back, next before it), with
 * a use held; or NULL. Unregistering clients stay listed until every
 * device they were told of has been told to them gone.
 */
static struct ibpost_client_state *ibpost_client_step(u64 from, bool back)
{
	struct ibpost_client_state *st;

	mutex_lock(&ibpost_clients_lock);
	if (back) {
		list_for_each_entry_reverse(st, &ibpost_clients, node)
			if (st->seq < from)
				goto found;
	} else {
		list_for_each_entry(st, &ibpost_clients, node)
			if (st->seq > from)
				goto found;
	}
	mutex_unlock(&ibpost_clients_lock);
	return NULL;
found:
	refcount_inc(&st->uses);
	mutex_unlock(&ibpost_clients_lock);
	return st;
}

static bool ibpost_client_listed(const struct ibpost_client *client)
{
	struct ibpost_client_state *st;

	lockdep_assert_held(&ibpost_clients_lock);
	list_for_each_entry(st, &ibpost_clients, node)
		if (st->client == client)
			return true;
	return false;
}

static void ibpost_client_put(struct ibpost_client_state *st)
{
	if (refcount_dec_and_test(&st->uses))
		complete(&st->unused);
}

/* The first device listed after @after, with a reference; or NULL. */
static struct ibpost_dev *ibpost_next_dev(u64 after)
{
	struct ibpost_dev *dev, *found = NULL;

	spin_lock_irq(&ibpost_dev_lock);
	list_for_each_entry(dev, &ibpost_devs, node) {
		if (dev->seq > after) {
			kref_get(&dev->ref);
			found = dev;
			break;
		}
	}
	spin_unlock_irq(&ibpost_dev_lock);
	return found;
}

static struct ibpost_client_dev *
ibpost_client_told(struct ibpost_client_state *st, struct ibpost_dev *dev)
{
	struct ibpost_client_dev *cd;

	lockdep_assert_held(&st->lock);
	list_for_each_entry(cd, &st->devs, node)
		if (cd->dev == dev)
			return cd;
	return NULL;
}

/*
 * Tell @st of @dev, once. Device and client both reach here, from the
 * device's arrival and from the client's registration, whichever sees the
 * other listed; the first one tells. Not once @dev is being removed (its
 * removal sets the bit before it tells the clients, each under its lock)
 * nor once @st is going.
 */
static void ibpost_client_tell_add(struct ibpost_client_state *st,
				   struct ibpost_dev *dev)
{
	struct ibpost_client_dev *cd = kmalloc(sizeof(*cd), GFP_KERNEL);

	/* Not told: the allocation's failure has been reported. */
	if (!cd)
		return;
	mutex_lock(&st->lock);
	if (st->going || test_bit(IBPOST_DEV_REMOVING, &dev->flags) ||
	    ibpost_client_told(st, dev)) {
		kfree(cd);
		goto out;
	}
	cd->dev = dev;
	list_add_tail(&cd->node, &st->devs);
	if (st->client->add)
		st->client->add(dev);
out:
	mutex_unlock(&st->lock);
}

/* Tell @st that @cd's device goes; under @st->lock. */
static void ibpost_client_tell_remove(struct ibpost_client_state *st,
				      struct ibpost_client_dev *cd)
{
	lockdep_assert_held(&st->lock);
	list_del(&cd->node);
	if (st->client->remove)
		st->client->remove(cd->dev);
	kfree(cd);
}

/**
 * ibpost_register_client - ask to be told about RDMA devices
 * @client: the consumer's client; @client->add is called at once for every
 *          present device, later for every new one
 *
 * Context: Process context; may sleep. Not from an ibpost_client callback.
 * Return: 0, -EINVAL when @client lacks a name, -EBUSY when it is
 * registered already, or -ENOMEM.
 */
int ibpost_register_client(struct ibpost_client *client)
{
	struct ibpost_client_state *st;
	struct ibpost_dev *dev;
	u64 seq = 0;

	if (!client || !client->name)
		return -EINVAL;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->client = client;
	mutex_init(&st->lock);
	INIT_LIST_HEAD(&st->devs);
	refcount_set(&st->uses, 1);
	init_completion(&st->unused);
	spin_lock_init(&st->events_lock);
	INIT_LIST_HEAD(&st->events);
	INIT_WORK(&st->event_work, ibpost_client_event_work);

	mutex_lock(&ibpost_clients_lock);
	if (ibpost_client_listed(client)) {
		mutex_unlock(&ibpost_clients_lock);
		kfree(st);
		pr_warn_ratelimited("client %s: registered already\n",
				    client->name);
		return -EBUSY;
	}
	client->state = st;
	st->seq = ++ibpost_client_seq;
	list_add_tail(&st->node, &ibpost_clients);
	mutex_unlock(&ibpost_clients_lock);
	/* Devices listed from here on tell the client themselves too. */
	while ((dev = ibpost_next_dev(seq))) {
		seq = dev->seq;
		ibpost_client_tell_add(st, dev);
		ibpost_dev_put(dev);
	}
	pr_debug("client %s registered\n", client->name);
	trace_ibpost_client_register(client->name);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(ibpost_register_client, IBPOST_NS);

/**
 * ibpost_unregister_client - stop hearing about RDMA devices
 * @client: a registered client; @client->remove is called for every
 *          device it was told of before this returns, and no callback of
 *          @client runs after it returns
 *
 * Context: Process context; may sleep. Not from an ibpost_client callback.
 * Return: nothing.
 */
void ibpost_unregister_client(struct ibpost_client *client)
{
	struct ibpost_client_state *st = client->state;
	struct ibpost_client_dev *cd;

	if (WARN_ON_ONCE(!st))
		return;
	mutex_lock(&st->lock);
	st->going = true;
	while (!list_empty(&st->devs)) {
		cd = list_last_entry(&st->devs, struct ibpost_client_dev, node);
		ibpost_client_tell_remove(st, cd);
	}
	mutex_unlock(&st->lock);
	ibpost_client_close_events(st);
	/*
	 * Listed until here, so that a device's removal running meanwhile
	 * waits for the client's remove of it before tearing it down.
	 */
	mutex_lock(&ibpost_clients_lock);
	list_del(&st->node);
	mutex_unlock(&ibpost_clients_lock);

	/* A device's walk may still hold the client: wait it out. */
	ibpost_client_put(st);
	wait_for_completion(&st->unused);
	client->state = NULL;
	kfree(st);
	pr_debug("client %s unregistered\n", client->name);
	trace_ibpost_client_unregister(client->name);
}
EXPORT_SYMBOL_NS_GPL(ibpost_unregister_client, IBPOST_NS);

/**
 * struct ibpost_dev_event - one device event on its way to the clients
 * @node: entry in ibpost_events, then in a client's @events
 * @dev: the device (a reference held)
 * @event: the event, copied
 */
struct ibpost_dev_event {
	struct list_head node;
	struct ibpost_dev *dev;
	struct ib_event event;
};

/*
 * Device events wait on ibpost_events for ibpost_events_work, which hands
 * each to every client with an event callback, on the client's own list
 * (struct ibpost_client_state's @events), in the order they came; each
 * client's @event_work tells them under its lock. No client's lock is
 * taken on the way, so a client busy in a callback delays only its own
 * events.
 */
static DEFINE_SPINLOCK(ibpost_events_lock);
static LIST_HEAD(ibpost_events);
static void ibpost_events_dispatch(struct work_struct *work);
static DECLARE_WORK(ibpost_events_work, ibpost_events_dispatch);

static void ibpost_dev_event_free(struct ibpost_dev_event *de)
{
	ibpost_dev_put(de->dev);
	kfree(de);
}

/* The first event on @list, taken off it under @lock; or NULL. */
static struct ibpost_dev_event *ibpost_dev_event_pop(spinlock_t *lock,
						     struct list_head *list)
{
	struct ibpost_dev_event *de;

	spin_lock_irq(lock);
	de = list_first_entry_or_null(list, struct ibpost_dev_event, node);
	if (de)
		list_del(&de->node);
	spin_unlock_irq(lock);
	return de;
}

/* A copy of @de for @st, unless @st is unregistering. */
static void ibpost_client_queue_event(struct ibpost_client_state *st,
				      const struct ibpost_dev_event *de)
{
	struct ibpost_dev_event *copy = kmalloc(sizeof(*copy), GFP_KERNEL);
	bool queued = false;

	if (!copy) {
		pr_warn_ratelimited("client %s: %s event %s dropped: out of memory\n",
				    st->client->name, de->dev->name,
				    ib_event_msg(de->event.event));
		return;
	}
	*copy = *de;
	kref_get(&copy->dev->ref);
	spin_lock_irq(&st->events_lock);
	if (!st->events_closed) {
		list_add_tail(&copy->node, &st->events);
		queue_work(ibpost_event_wq, &st->event_work);
		queued = true;
	}
	spin_unlock_irq(&st->events_lock);
	if (!queued)
		ibpost_dev_event_free(copy);
}

static void ibpost_events_dispatch(struct work_struct *work)
{
	struct ibpost_client_state *st;
	struct ibpost_dev_event *de;
	u64 seq;

	while ((de = ibpost_dev_event_pop(&ibpost_events_lock,
					  &ibpost_events))) {
		seq = 0;
		while ((st = ibpost_client_step(seq, false))) {
			seq = st->seq;
			if (st->client->event)
				ibpost_client_queue_event(st, de);
			ibpost_client_put(st);
		}
		ibpost_dev_event_free(de);
	}
}

/*
 * One client's events, in order, each told under the client's lock if the
 * client was told of the device and neither is going.
 */
static void ibpost_client_event_work(struct work_struct *work)
{
	struct ibpost_client_state *st =
		container_of(work, struct ibpost_client_state, event_work);
	struct ibpost_dev_event *de;

	while ((de = ibpost_dev_event_pop(&st->events_lock, &st->events))) {
		mutex_lock(&st->lock);
		if (!st->going && ibpost_client_told(st, de->dev) &&
		    !test_bit(IBPOST_DEV_REMOVING, &de->dev->flags))
			st->client->event(de->dev, &de->event);
		mutex_unlock(&st->lock);
		ibpost_dev_event_free(de);
	}
}

/* Unregistration: no event is queued for @st after this, none is told. */
static void ibpost_client_close_events(struct ibpost_client_state *st)
{
	struct ibpost_dev_event *de, *tmp;

	spin_lock_irq(&st->events_lock);
	st->events_closed = true;
	spin_unlock_irq(&st->events_lock);
	cancel_work_sync(&st->event_work);
	list_for_each_entry_safe(de, tmp, &st->events, node) {
		list_del(&de->node);
		ibpost_dev_event_free(de);
	}
}

/*
 * ib_core's call, its event handler rwsem held: that rwsem is taken
 * under rtnl_mutex elsewhere, and a client's callbacks may create QPs
 * (provider calls that may take rtnl_mutex), so the clients are told from
 * work items.
 */
static void ibpost_dev_event(struct ib_event_handler *handler,
			     struct ib_event *event)
{
	struct ibpost_dev *dev = container_of(handler, struct ibpost_dev,
					      event_handler);
	struct ibpost_dev_event *de = kmalloc(sizeof(*de), GFP_ATOMIC);
	unsigned long flags;

	if (!de) {
		pr_warn_ratelimited("%s: event %s dropped: out of memory\n",
				    dev->name, ib_event_msg(event->event));
		return;
	}
	kref_get(&dev->ref);
	de->dev = dev;
	de->event = *event;
	spin_lock_irqsave(&ibpost_events_lock, flags);
	list_add_tail(&de->node, &ibpost_events);
	spin_unlock_irqrestore(&ibpost_events_lock, flags);
	queue_work(ibpost_event_wq, &ibpost_events_work);
}

static int ibpost_add_one(struct ib_device *ibdev)
{
	struct ibpost_client_state *st;
	struct ibpost_dev *dev;
	u64 seq = 0;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	kref_init(&dev->ref);
	mutex_init(&dev->qp_lock);
	INIT_LIST_HEAD(&dev->node);
	INIT_LIST_HEAD(&dev->qps);
	INIT_LIST_HEAD(&dev->srqs);
	spin_lock_init(&dev->mr_lock);
	INIT_LIST_HEAD(&dev->mrs);
	dev->mrs_by_addr = RB_ROOT_CACHED;
	xa_init(&dev->frwr_keys);
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

	mutex_lock(&ibpost_clients_lock);
	ibpost_debugfs_add_dev(dev);
	/* Handed back to .remove and .rename. */
	ib_set_client_data(ibdev, &ibpost_ib_client, dev);
	/* Found by lookups and by registering clients once complete. */
	spin_lock_irq(&ibpost_dev_lock);
	dev->seq = ++ibpost_dev_seq;
	list_add_tail(&dev->node, &ibpost_devs);
	spin_unlock_irq(&ibpost_dev_lock);
	mutex_unlock(&ibpost_clients_lock);
	/* Events from now on: told to each client once told of the device. */
	INIT_IB_EVENT_HANDLER(&dev->event_handler, ibdev, ibpost_dev_event);
	ib_register_event_handler(&dev->event_handler);
	/* Clients registering from here on tell themselves too. */
	while ((st = ibpost_client_step(seq, false))) {
		seq = st->seq;
		ibpost_client_tell_add(st, dev);
		ibpost_client_put(st);
	}
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
	struct ibpost_client_state *st;
	struct ibpost_client_dev *cd;
	u64 seq = U64_MAX;

	trace_ibpost_dev_remove(ibdev);
	/* No event is queued for the device after this. */
	ib_unregister_event_handler(&dev->event_handler);
	/* No lookup nor registering client finds it from here on. */
	spin_lock_irq(&ibpost_dev_lock);
	set_bit(IBPOST_DEV_REMOVING, &dev->flags);
	list_del_init(&dev->node);
	spin_unlock_irq(&ibpost_dev_lock);
	/* Every client told of it, last registered first. */
	while ((st = ibpost_client_step(seq, true))) {
		seq = st->seq;
		mutex_lock(&st->lock);
		cd = ibpost_client_told(st, dev);
		if (cd)
			ibpost_client_tell_remove(st, cd);
		mutex_unlock(&st->lock);
		ibpost_client_put(st);
	}
	mutex_lock(&ibpost_clients_lock);
	ibpost_debugfs_remove_dev(dev);
	mutex_unlock(&ibpost_clients_lock);

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
