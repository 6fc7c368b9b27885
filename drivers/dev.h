/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device layer: ibpost's context on one ib_device (struct
 * ibpost_dev) and the device list.
 */
#ifndef _IBPOST_DEV_H
#define _IBPOST_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include "ring.h"

struct seq_file;

/* dev->flags */
enum {
	IBPOST_DEV_REMOVING,	/* remove started: no new QPs, posts -ENODEV */
};

/**
 * struct ibpost_dev - ibpost's context on one ib_device
 * @ref: held by the device list until removal and by every consumer
 *       reference and QP
 * @ibdev: the device; NULL once removal has finished
 * @pd: ibpost's protection domain on it
 * @flags: IBPOST_DEV_* bits
 * @node: entry in the global device list
 * @seq: listing number, increasing in list order (client.c's walks)
 * @qp_lock: protects @qps, the MRs' release against removal, and the
 *           device's provider objects (@ibdev, @pd) while it is held;
 *           never held while a consumer callback runs
 * @qps: every QP on the device whose provider objects may still exist
 * @srqs: every shared receive queue on the device not yet destroyed
 * @nr_qps: length of @qps, for debugfs
 * @mr_lock: protects @mrs, @mr_seq and @mrs_by_addr
 * @mrs: every live MR registered on the device, oldest first
 * @mr_seq: the registration number of the newest MR listed
 * @mrs_by_addr: @mrs by the DMA addresses their SGEs may start at (an
 *               interval tree, mr_table.c): the post path's SGE lookup
 * @debugfs: this device's debugfs directory
 * @name: the ib_device's name
 * @retired: send and receive counters of the QPs destroyed on the device
 * @iwarp: rdma_protocol_iwarp() of the device's first port, at its add
 * @event_handler: ibpost's handler of the device's asynchronous events
 *                 (client.c), registered while the device is listed
 * @nr_vecs: the device's completion vectors (at least 1)
 * @vec_qps: per completion vector, the QPs whose CQs use it (under
 *           @qp_lock when taken, atomically when given back)
 * @frwr_keys: the fast-registration pool entries of the device's QPs, by
 *             key index (rkey >> 8): a peer's SEND_WITH_INV may retire a
 *             key through any QP of ibpost's PD (frwr.c); read under RCU
 */
struct ibpost_dev {
	struct kref ref;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	unsigned long flags;
	struct list_head node;
	u64 seq;
	struct mutex qp_lock;	/* see the kernel-doc above */
	struct list_head qps;
	struct list_head srqs;
	unsigned int nr_qps;
	spinlock_t mr_lock;	/* see the kernel-doc above */
	struct list_head mrs;
	u64 mr_seq;
	struct rb_root_cached mrs_by_addr;
	struct dentry *debugfs;
	char name[IB_DEVICE_NAME_MAX];
	struct ibpost_stats retired[2];	/* under qp_lock */
	bool iwarp;		/* rdma_protocol_iwarp(): see below */
	struct ib_event_handler event_handler;
	u32 nr_vecs;
	atomic_t *vec_qps;
	struct xarray frwr_keys;
};

/*
 * iWARP devices (rdma_protocol_iwarp()) differ in what ibpost absorbs:
 * RC only, connected through rdma_cm only (iw_cm), no immediate data,
 * at most attrs.max_sge_rd SGEs per READ (siw: 1), and a READ sink that
 * is written by the peer's tagged READ response.
 */
static inline bool ibpost_dev_iwarp(const struct ibpost_dev *dev)
{
	return dev->iwarp;
}

/* dev.c: the device list, changed by client.c only */
extern spinlock_t ibpost_dev_lock;
extern struct list_head ibpost_devs;
void ibpost_dev_release(struct kref *ref);
void ibpost_show_devs(struct seq_file *m);
struct ibpost_dev *ibpost_dev_of(struct ib_device *ibdev);
int ibpost_dev_vector_get(struct ibpost_dev *dev, int want);
void ibpost_dev_vector_put(struct ibpost_dev *dev, int vec);
struct ib_mr *ibpost_dev_alloc_fr_mr(struct ibpost_dev *dev, u32 pages);

/* client.c */
int ibpost_client_init(void);
void ibpost_client_exit(void);

#endif /* _IBPOST_DEV_H */
