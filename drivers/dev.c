// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device contexts: struct ibpost_dev (a kref, a PD), the list of
 * present devices and the lookups consumers make on it. Made and removed
 * by ibpost's ib_client (client.c), which adds a device to the list once
 * its context is complete and takes it off first at removal.
 *
 * A device is found by name (ibpost_dev_get(): .rename updates the name,
 * so a renamed device keeps its handle and is found under its new name
 * only) or from its ib_device (ibpost_dev_get_by_ibdev() for consumers,
 * ibpost_dev_of() inside ibpost, never by name). The
 * struct ibpost_dev itself lives on while consumers hold references.
 *
 * Serialization: ibpost_dev_lock (a spinlock) guards the device list for
 * lookups, which consumers may do from their callbacks, and the reference
 * a lookup takes: the list holds one reference, dropped only after the
 * device left the list under the lock. Only client.c changes the list;
 * its walks take a reference per step (dev->seq is their cursor).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/seq_file.h>
#include <rdma/ibpost.h>
#include "dev.h"

DEFINE_SPINLOCK(ibpost_dev_lock);
LIST_HEAD(ibpost_devs);

void ibpost_dev_release(struct kref *ref)
{
	struct ibpost_dev *dev = container_of(ref, struct ibpost_dev, ref);

	WARN_ON_ONCE(dev->pd || !list_empty(&dev->qps) ||
		     !list_empty(&dev->mrs) ||
		     !RB_EMPTY_ROOT(&dev->mrs_by_addr.rb_root));
	WARN_ON_ONCE(!xa_empty(&dev->frwr_keys));
	xa_destroy(&dev->frwr_keys);
	kfree(dev->vec_qps);
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
 * ibpost_dev_get_by_ibdev - ibpost's context on an RDMA device, by device
 * @ibdev: the ib_device, e.g. an rdma_cm id's ->device
 *
 * Found by the ib_device itself, never by its name: a rename between a
 * consumer's reading of the name and its lookup cannot make it miss the
 * device or find another. Only the pointer is compared, never
 * dereferenced.
 *
 * Context: Any context that may take a spinlock.
 * Return: the device with a reference the caller drops with
 * ibpost_dev_put(), or ERR_PTR(-ENODEV) when @ibdev is NULL, ibpost has
 * no context on it (its add failed) or it is being removed.
 */
struct ibpost_dev *ibpost_dev_get_by_ibdev(struct ib_device *ibdev)
{
	return ibpost_dev_of(ibdev) ?: ERR_PTR(-ENODEV);
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_get_by_ibdev, IBPOST_NS);

/**
 * ibpost_dev_put - drop a device reference
 * @dev: from ibpost_dev_get() or ibpost_dev_get_by_ibdev(), or NULL
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

/**
 * ibpost_dev_num_comp_vectors - the completion vectors a QP may ask for
 * @dev: the device
 *
 * struct ibpost_qp_attr's comp_vector is below this, or
 * IBPOST_COMP_VECTOR_ANY.
 *
 * Context: Any context.
 * Return: the device's completion vectors (at least 1).
 */
int ibpost_dev_num_comp_vectors(struct ibpost_dev *dev)
{
	return dev->nr_vecs;
}
EXPORT_SYMBOL_NS_GPL(ibpost_dev_num_comp_vectors, IBPOST_NS);

/*
 * A QP's completion vector, counted: @want, or for IBPOST_COMP_VECTOR_ANY
 * the one with the fewest QPs (the first of those). dev->qp_lock held, so
 * that two creations do not pick the same one at once. Return: the
 * vector, or -EINVAL for one the device does not have.
 */
int ibpost_dev_vector_get(struct ibpost_dev *dev, int want)
{
	u32 i;

	lockdep_assert_held(&dev->qp_lock);
	if (want == IBPOST_COMP_VECTOR_ANY) {
		want = 0;
		for (i = 1; i < dev->nr_vecs; i++)
			if (atomic_read(&dev->vec_qps[i]) <
			    atomic_read(&dev->vec_qps[want]))
				want = i;
	}
	if (want < 0 || want >= dev->nr_vecs)
		return -EINVAL;
	atomic_inc(&dev->vec_qps[want]);
	return want;
}

/* A QP of ibpost_dev_vector_get()'s @vec is gone. */
void ibpost_dev_vector_put(struct ibpost_dev *dev, int vec)
{
	atomic_dec(&dev->vec_qps[vec]);
}

/* debugfs "devices": one line per device. */
void ibpost_show_devs(struct seq_file *m)
{
	struct ibpost_dev *dev;

	spin_lock_irq(&ibpost_dev_lock);
	list_for_each_entry(dev, &ibpost_devs, node)
		seq_printf(m, "%s qps %u\n", dev->name, READ_ONCE(dev->nr_qps));
	spin_unlock_irq(&ibpost_dev_lock);
}

/*
 * The ibpost device of @ibdev with a reference, or NULL: ibpost has no
 * context on @ibdev (never added, its add failed, or it is being
 * removed). Found by the ib_device itself, never by its name (which a
 * rename changes), on the device list: a device is listed once its
 * context is complete and leaves the list, under ibpost_dev_lock, before
 * the list's reference is dropped, so a device found here always has
 * that reference behind it.
 */
struct ibpost_dev *ibpost_dev_of(struct ib_device *ibdev)
{
	struct ibpost_dev *dev, *found = NULL;
	unsigned long flags;

	if (!ibdev)
		return NULL;
	spin_lock_irqsave(&ibpost_dev_lock, flags);
	list_for_each_entry(dev, &ibpost_devs, node) {
		if (dev->ibdev == ibdev) {
			kref_get(&dev->ref);
			found = dev;
			break;
		}
	}
	spin_unlock_irqrestore(&ibpost_dev_lock, flags);
	return found;
}

/*
 * rxe's MRs before its page maps became an xarray (Linux 6.1 here) keep
 * their pages in maps of this many buffers, and rxe_mr_copy() steps to
 * the next map after each full one, reading one pointer past the map
 * array when a copy ends on the last page of an MR made of whole maps.
 */
#define IBPOST_RXE_BUF_PER_MAP	(PAGE_SIZE / (2 * sizeof(u64)))

/**
 * ibpost_dev_alloc_fr_mr - a fast-registration MR of ibpost's PD
 * @dev: the device
 * @pages: the pages it must map
 *
 * Where the provider is rxe, an MR of whole maps gets one page more
 * (never used, at the device's maximum too), so that the map array an
 * older rxe reads past has an entry; a newer one (an xarray of pages,
 * 6.12) loses nothing by it.
 *
 * Context: Process context.
 * Return: the MR, or an ERR_PTR() as ib_alloc_mr().
 */
struct ib_mr *ibpost_dev_alloc_fr_mr(struct ibpost_dev *dev, u32 pages)
{
	struct ib_device *ibdev = dev->ibdev;

	/* rxe takes any page count (its maximum is not checked). */
	if (ibdev->ops.driver_id == RDMA_DRIVER_RXE &&
	    !(pages % IBPOST_RXE_BUF_PER_MAP))
		pages++;
	return ib_alloc_mr(dev->pd, IB_MR_TYPE_MEM_REG, pages);
}
