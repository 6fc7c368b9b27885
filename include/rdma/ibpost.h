/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost - a posting layer for in-kernel RDMA consumers.
 *
 * The binding API and semantics are described in Documentation/api.rst.
 * Every symbol here is exported in namespace IBPOST: consumers add
 * MODULE_IMPORT_NS(IBPOST_NS), or MODULE_IMPORT_NS(IBPOST) on kernels
 * before 6.13.
 */
#ifndef _RDMA_IBPOST_H
#define _RDMA_IBPOST_H

#include <linux/types.h>
#include <linux/version.h>
#include <linux/dma-direction.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

/*
 * IBPOST_NS - the symbol namespace of every ibpost export, the one place
 * it is spelled. Linux 6.13 made namespaces string literals in
 * EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS(); earlier kernels take a
 * bare token, which they stringify themselves. __IBPOST_NS_NAME() spells
 * a namespace name either way (the test helper modules' too).
 */
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
#define __IBPOST_NS_NAME(name) #name
#else
#define __IBPOST_NS_NAME(name) name
#endif
#define IBPOST_NS __IBPOST_NS_NAME(IBPOST)

struct ibpost_dev;
struct ibpost_qp;
struct ibpost_comp;
struct ibpost_srq;

/* ---- Devices ---------------------------------------------------------- */

struct ibpost_dev *ibpost_dev_get(const char *ibdev_name);
struct ibpost_dev *ibpost_dev_get_by_ibdev(struct ib_device *ibdev);
void ibpost_dev_put(struct ibpost_dev *dev);
struct ib_device *ibpost_dev_ibdev(struct ibpost_dev *dev);
struct ib_pd *ibpost_dev_pd(struct ibpost_dev *dev);
int ibpost_dev_num_comp_vectors(struct ibpost_dev *dev);

struct ibpost_client_state;

/**
 * struct ibpost_client - a consumer that wants to hear about devices
 * @name: the consumer's name, for messages
 * @add: called for every device present at registration and every device
 *       added later
 * @remove: called when a device goes away (or the client unregisters);
 *          the consumer must stop using the device and destroy its QPs
 * @event: called once per asynchronous event of a device the client was
 *         told of by @add and not yet by @remove (IB_EVENT_PORT_ERR,
 *         IB_EVENT_PORT_ACTIVE, IB_EVENT_LID_CHANGE, IB_EVENT_GID_CHANGE's
 *         per-entry reports, IB_EVENT_DEVICE_FATAL, ...), as ib_core
 *         delivers them to its event handlers; NULL: none
 * @state: internal, owned by ibpost while the client is registered
 *
 * Zero-initialize it (a static or designated initializer, kzalloc()):
 * fields the consumer does not set must be NULL.
 *
 * The callbacks run in process context, one at a time per client, under
 * that client's own lock, never under a lock shared by all clients: a
 * client's slow callback does not hold up another client's registration
 * or its callbacks for other devices, nor its events (a device arriving
 * tells the clients one after another in registration order, a device
 * leaving in the reverse order). They may
 * create and destroy QPs and take device references, but must not
 * register or unregister clients.
 */
struct ibpost_client {
	const char *name;
	void (*add)(struct ibpost_dev *dev);
	void (*remove)(struct ibpost_dev *dev);
	void (*event)(struct ibpost_dev *dev, const struct ib_event *event);
	struct ibpost_client_state *state;
};

int ibpost_register_client(struct ibpost_client *client);
void ibpost_unregister_client(struct ibpost_client *client);

/* ---- QPs -------------------------------------------------------------- */

/**
 * struct ibpost_qp_attr - what a consumer asks for when creating a QP
 * @qp_type: IB_QPT_RC or IB_QPT_UD
 * @max_send_wr: send queue depth wanted
 * @max_recv_wr: receive queue depth wanted
 * @max_send_sge: scatter/gather entries per send WR (at most 255)
 * @max_recv_sge: scatter/gather entries per receive WR (at most 255)
 * @max_inline_data: bytes of inline data per send WR
 * @signal_interval: force a signaled WR at least every this many send WRs
 *                   (0: ibpost chooses)
 * @qkey: Q_Key of a UD QP
 * @poll_ctx: where completions are processed
 * @send_done: called once per returned send context; NULL queues it for
 *             ibpost_get_send_comp()
 * @recv_done: called once per returned receive context; NULL queues it
 *             for ibpost_get_recv_comp()
 * @priv: the consumer's pointer, returned by ibpost_qp_priv()
 * @release: for a queue without a callback: called by ibpost_qp_destroy(),
 *           before it returns, once per completion still queued for
 *           ibpost_get_*_comp() (@send says which queue), so that a
 *           consumer freeing per-request objects gets every context
 *           back; process context, no lock of @qp held (ibpost's client
 *           lock is, when the destroy comes from an ibpost_client's
 *           remove); it must not call ibpost on @qp (a destroy from it is
 *           refused with a warning). NULL: such completions are dropped.
 * @event: called once per asynchronous event of the QP the provider
 *         reports (IB_EVENT_QP_FATAL, IB_EVENT_QP_REQ_ERR,
 *         IB_EVENT_QP_ACCESS_ERR, IB_EVENT_COMM_EST, IB_EVENT_SQ_DRAINED,
 *         ...), in process context, after ibpost's own handling: a fatal,
 *         request or access error has moved the QP to ERR, so that every
 *         outstanding context comes back flushed; COMM_EST has been
 *         passed to rdma_cm (rdma_notify()) for a QP on a cm_id. Events
 *         of one type reported again before the call are told once.
 *         NULL: ibpost's handling only.
 * @comp_vector: the completion vector of the QP's two CQs, below
 *               ibpost_dev_num_comp_vectors() (0, the default: the first);
 *               IBPOST_COMP_VECTOR_ANY: the vector of the device with
 *               the fewest of ibpost's QPs. ibpost_qp_get_attr() gives
 *               the vector taken.
 * @ib_cqe: ib_cqe mode, the way ib_core's own consumers complete: every
 *          context posted on the QP (a seed operation's @context, a
 *          chain's wr_cqe) is a struct ib_cqe * whose ->done is set, or
 *          the post fails with -EINVAL; each context comes back once, as
 *          in the other modes (signaled successes, every error and
 *          flush), through cqe->done(cq, wc) with wc->wr_cqe the
 *          consumer's own cqe, in the context @poll_ctx says. @cq is
 *          the queue's CQ (its cq_context, like wc->qp's qp_context, is
 *          ibpost's; NULL for a flush after a destroy or a device
 *          removal freed it): find your request with
 *          container_of(wc->wr_cqe, ...). @send_done, @recv_done and
 *          @release must be NULL. Outside this mode the wc a callback gets has
 *          wr_cqe NULL: ibpost's own entry is never shown.
 * @shared_cq: take both CQs from ib_core's CQ pool (ib_cq_pool_get()) on
 *             @comp_vector and @poll_ctx, shared with the other QPs (of
 *             any ULP) that take them there, as ULPs with a QP per CPU
 *             do; the QP's share is its queue depths. Not with
 *             IB_POLL_DIRECT (-EINVAL), on iWARP (-EOPNOTSUPP) or
 *             beyond the device's max_cqe (-EINVAL). Drain, RESET,
 *             destroy and device removal of one QP leave its CQs' other
 *             QPs undisturbed.
 * @srq: take receives from this shared receive queue (ibpost_srq_create()
 *       on the same device, hence ibpost's PD there; same @poll_ctx)
 *       instead of a receive queue of the QP's own: @max_recv_wr,
 *       @max_recv_sge and @recv_done are then unused, a receive posted
 *       on the QP is refused (-EINVAL) and the QP's receive completions
 *       come back through the SRQ's callback. The QP is attached until
 *       ibpost_qp_destroy(). Not with @shared_cq (-EOPNOTSUPP: no
 *       receive drain marker can prove an SRQ QP's last receive
 *       completion polled on a CQ that outlives it).
 * @frwr_maps: entries of the QP's fast-registration pool: sg lists mapped
 *             with ibpost_frwr_map() at once, at most; 0: no pool. RC
 *             only (-EINVAL); a device without fast registration:
 *             -EOPNOTSUPP. The send queue holds two slots per entry
 *             besides @max_send_wr (its REG_MR, its LOCAL_INV)
 * @frwr_max_pages: pages one map covers at most; 0: the device's
 *                  fast-registration page list, at most 256; beyond the
 *                  device's: -EINVAL. ibpost_qp_get_attr() gives it.
 * @rw_ops: RDMA READ/WRITE operations over sg lists (ibpost_rw_post()) in
 *          flight at once that may take registrations: ib_core's
 *          max_rdma_ctxs, for which it keeps MRs where an operation
 *          needs them (an iWARP READ); 0: ibpost_rw_post() is refused
 *          (-EINVAL). RC only (-EINVAL). Each operation takes the send
 *          queue's slots of the WRs it is made of, from @max_send_wr.
 */
struct ibpost_qp_attr {
	enum ib_qp_type qp_type;
	u32 max_send_wr, max_recv_wr;
	u32 max_send_sge, max_recv_sge;
	u32 max_inline_data;
	u32 signal_interval;
	u32 qkey;
	enum ib_poll_context poll_ctx;
	void (*send_done)(struct ibpost_qp *qp, void *context,
			  const struct ib_wc *wc);
	void (*recv_done)(struct ibpost_qp *qp, void *context,
			  const struct ib_wc *wc);
	void *priv;
	void (*release)(struct ibpost_qp *qp, bool send,
			const struct ibpost_comp *comp);
	int comp_vector;
	void (*event)(struct ibpost_qp *qp, enum ib_event_type event);
	bool ib_cqe;
	bool shared_cq;
	struct ibpost_srq *srq;
	u32 frwr_maps;
	u32 frwr_max_pages;
	u32 rw_ops;
};

/* struct ibpost_qp_attr's comp_vector: the least loaded vector. */
#define IBPOST_COMP_VECTOR_ANY	(-1)

struct rdma_cm_id;

struct ibpost_qp *__ibpost_qp_create(struct ibpost_dev *dev,
				     const struct ibpost_qp_attr *attr,
				     const char *caller);
struct ibpost_qp *__ibpost_qp_create_cm(struct rdma_cm_id *id,
					const struct ibpost_qp_attr *attr,
					const char *caller);

/**
 * ibpost_qp_create - create a QP, credited to the calling module
 * @dev: the device (a reference is taken for the QP's lifetime)
 * @attr: what is wanted; see struct ibpost_qp_attr
 *
 * Wraps __ibpost_qp_create() with the consumer's KBUILD_MODNAME, as
 * ib_alloc_cq() wraps __ib_alloc_cq(), so that ``rdma resource show qp``
 * and ``cq`` name the consumer.
 *
 * Context: Process context; may sleep.
 * Return: the QP, or an ERR_PTR as __ibpost_qp_create() returns it.
 */
static inline struct ibpost_qp *
ibpost_qp_create(struct ibpost_dev *dev, const struct ibpost_qp_attr *attr)
{
	return __ibpost_qp_create(dev, attr, KBUILD_MODNAME);
}

/**
 * ibpost_qp_create_cm - create a QP on an rdma_cm_id, credited to the caller
 * @id: the cm_id, bound to a device (route resolved, or a connect request)
 * @attr: what is wanted; see struct ibpost_qp_attr
 *
 * Wraps __ibpost_qp_create_cm() with the consumer's KBUILD_MODNAME.
 *
 * Context: Process context; may sleep (a cm event handler is fine).
 * Return: the QP, or an ERR_PTR as __ibpost_qp_create_cm() returns it.
 */
static inline struct ibpost_qp *
ibpost_qp_create_cm(struct rdma_cm_id *id, const struct ibpost_qp_attr *attr)
{
	return __ibpost_qp_create_cm(id, attr, KBUILD_MODNAME);
}

int ibpost_qp_connect_loopback(struct ibpost_qp *a, struct ibpost_qp *b);
void ibpost_qp_destroy(struct ibpost_qp *qp);
struct ib_qp *ibpost_qp_ibqp(struct ibpost_qp *qp);
void *ibpost_qp_priv(struct ibpost_qp *qp);
void ibpost_qp_get_attr(struct ibpost_qp *qp, struct ibpost_qp_attr *attr);
int ibpost_qp_modify(struct ibpost_qp *qp, struct ib_qp_attr *attr,
		     int attr_mask);
int ibpost_qp_loopback_av(struct ibpost_qp *qp, struct rdma_ah_attr *ah);

/* ---- Shared receive queues -------------------------------------------- */

/**
 * struct ibpost_srq_attr - what a consumer asks for when creating an SRQ
 * @max_wr: receive WRs the SRQ holds at most (granted: see
 *          ibpost_srq_get_attr())
 * @max_sge: scatter/gather entries per receive WR (at most 255)
 * @poll_ctx: the completion context of the QPs that attach (each must
 *            have the same): the SRQ's own flushes run as theirs would
 * @recv_done: called once per returned receive context, with the QP whose
 *             receive queue took the WR and its completion (wc->qp NULL
 *             when that QP's destroy reaped it after the provider QP was
 *             freed); with a NULL QP (and wc->qp NULL) for the WRs still
 *             queued when the SRQ is destroyed or its device removed,
 *             flushed. It may repost to the SRQ; from those last
 *             flushes it may not destroy or arm any SRQ (-EWOULDBLOCK:
 *             two destroys could wait for each other's flush).
 *             Required unless @ib_cqe
 * @ib_cqe: every context is a struct ib_cqe * (as struct ibpost_qp_attr's
 *          @ib_cqe): cqe->done(cq, wc) gets each completion, cq the
 *          taking QP's receive CQ (wc->qp as for @recv_done), or NULL
 *          with wc->qp NULL for the SRQ's own flushes; @recv_done must
 *          be NULL
 * @event: called in process context for the SRQ's asynchronous events
 *         (IB_EVENT_SRQ_LIMIT_REACHED once the limit armed by
 *         ibpost_srq_arm() is crossed, IB_EVENT_SRQ_ERR); NULL: none
 * @priv: the consumer's pointer, returned by ibpost_srq_priv()
 */
struct ibpost_srq_attr {
	u32 max_wr;
	u32 max_sge;
	enum ib_poll_context poll_ctx;
	void (*recv_done)(struct ibpost_qp *qp, void *context,
			  const struct ib_wc *wc);
	bool ib_cqe;
	void (*event)(struct ibpost_srq *srq, enum ib_event_type event);
	void *priv;
};

struct ibpost_srq *ibpost_srq_create(struct ibpost_dev *dev,
				     const struct ibpost_srq_attr *attr);
int ibpost_srq_destroy(struct ibpost_srq *srq);
int ibpost_srq_arm(struct ibpost_srq *srq, u32 limit);
void *ibpost_srq_priv(struct ibpost_srq *srq);
void ibpost_srq_get_attr(struct ibpost_srq *srq, struct ibpost_srq_attr *attr);

/* ---- Memory registration ---------------------------------------------- */

struct ibpost_mr;

struct ibpost_mr *ibpost_reg_msgs(struct ibpost_dev *dev, void *buf,
				  size_t len);
struct ibpost_mr *__ibpost_reg_remote(struct ibpost_qp *qp, void *buf,
				      size_t len, int access,
				      const char *caller);

/**
 * ibpost_reg_read - register a buffer for remote read, credited to the caller
 * @qp: the connected RC QP the peer reads through
 * @buf: a physically contiguous buffer
 * @len: its length in bytes
 *
 * Wraps __ibpost_reg_remote() with remote read access and the consumer's
 * KBUILD_MODNAME, so that ``rdma resource show mr`` names the consumer.
 *
 * Context: Process context; sleeps until the registration completes.
 * Return: as __ibpost_reg_remote().
 */
static inline struct ibpost_mr *
ibpost_reg_read(struct ibpost_qp *qp, void *buf, size_t len)
{
	return __ibpost_reg_remote(qp, buf, len,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
				   KBUILD_MODNAME);
}

/**
 * ibpost_reg_write - register a buffer for remote write, credited to the caller
 * @qp: the connected RC QP the peer writes through
 * @buf: a physically contiguous buffer
 * @len: its length in bytes
 *
 * Wraps __ibpost_reg_remote() with remote write access and the consumer's
 * KBUILD_MODNAME.
 *
 * Context: Process context; sleeps until the registration completes.
 * Return: as __ibpost_reg_remote().
 */
static inline struct ibpost_mr *
ibpost_reg_write(struct ibpost_qp *qp, void *buf, size_t len)
{
	return __ibpost_reg_remote(qp, buf, len,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
				   KBUILD_MODNAME);
}

int ibpost_dereg_mr(struct ibpost_mr *mr);
u64 ibpost_mr_remote_addr(const struct ibpost_mr *mr);
u32 ibpost_mr_rkey(const struct ibpost_mr *mr);
int ibpost_mr_sge(const struct ibpost_mr *mr, const void *addr, u32 length,
		  struct ib_sge *sge);

/* ---- Memory a ULP holds: pages, sg_tables, its own DMA mappings ------ */

struct ibpost_mr *ibpost_reg_sgt(struct ibpost_dev *dev, struct sg_table *sgt,
				 enum dma_data_direction dir);
struct ibpost_mr *ibpost_reg_page(struct ibpost_dev *dev, struct page *page,
				  unsigned int offset, size_t len,
				  enum dma_data_direction dir);
struct ibpost_mr *ibpost_reg_vmalloc(struct ibpost_dev *dev, void *buf,
				     size_t len, enum dma_data_direction dir);
struct ibpost_mr *ibpost_reg_dma(struct ibpost_dev *dev,
				 struct scatterlist *sgl, int dma_nents,
				 enum dma_data_direction dir);
size_t ibpost_mr_length(const struct ibpost_mr *mr);
int ibpost_mr_sync_for_cpu(struct ibpost_mr *mr, u64 offset, u32 length);
int ibpost_mr_sync_for_device(struct ibpost_mr *mr, u64 offset, u32 length);

struct ibpost_frwr;
struct scatterlist;

/**
 * struct ibpost_frwr_map - one fast registration, filled by ibpost_frwr_map()
 * @ent: ibpost's pool entry (opaque); NULL once unmapped through this
 *       handle
 * @gen: the entry's generation at the map: a stale copy is refused
 * @rkey: the key the peer uses (a fresh one at each map)
 * @iova: the address the peer uses for the map's first byte
 * @length: bytes mapped: the sg list's
 *
 * The consumer's, by value (in its request, as nvme-rdma keeps its MR).
 */
struct ibpost_frwr_map {
	struct ibpost_frwr *ent;
	u32 gen;
	u32 rkey;
	u64 iova;
	u32 length;
};

/* ibpost_frwr_unmap(): nothing was posted; no context comes back. */
#define IBPOST_FRWR_DONE	1

int ibpost_frwr_map(struct ibpost_qp *qp, struct scatterlist *sg, int nents,
		    int access, struct ibpost_frwr_map *map);
int ibpost_frwr_unmap(struct ibpost_qp *qp, struct ibpost_frwr_map *map,
		      void *context);
int ibpost_rw_post(struct ibpost_qp *qp, void *context, struct scatterlist *sg,
		   u32 sg_cnt, u32 sg_offset, u64 remote_addr, u32 rkey,
		   enum dma_data_direction dir, int flags,
		   const struct ib_send_wr *send);
int ibpost_mr_sgl(const struct ibpost_mr *mr, u64 offset, u32 length,
		  struct ib_sge *sge, int max_sge);
int ibpost_post_mr(struct ibpost_qp *qp, void *context,
		   enum ib_wr_opcode opcode, struct ibpost_mr *mr, u64 offset,
		   u32 length, int flags, u64 remote_addr, u32 rkey);
int ibpost_post_recv_mr(struct ibpost_qp *qp, void *context,
			struct ibpost_mr *mr, u64 offset, u32 length);

/* ---- Posting: the seed operations ------------------------------------- */

/**
 * struct ibpost_sge - one piece of a registered buffer
 * @addr: kernel virtual address inside @mr's buffer (or of inline data)
 * @length: bytes
 * @mr: the registration holding it; NULL only with IB_SEND_INLINE
 */
struct ibpost_sge {
	void *addr;
	u32 length;
	struct ibpost_mr *mr;
};

int ibpost_post_send(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr, int flags);
int ibpost_post_sendv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge, int flags);
int ibpost_post_recv(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr);
int ibpost_post_recvv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge);
int ibpost_post_read(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr, int flags,
		     u64 remote_addr, u32 rkey);
int ibpost_post_readv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge, int flags,
		      u64 remote_addr, u32 rkey);
int ibpost_post_write(struct ibpost_qp *qp, void *context, void *addr,
		      size_t length, struct ibpost_mr *mr, int flags,
		      u64 remote_addr, u32 rkey);
int ibpost_post_writev(struct ibpost_qp *qp, void *context,
		       struct ibpost_sge *sgl, int nsge, int flags,
		       u64 remote_addr, u32 rkey);
int ibpost_post_ud_send(struct ibpost_qp *qp, void *context, void *addr,
			size_t length, struct ibpost_mr *mr, int flags,
			struct ib_ah *ah, u32 remote_qpn, u32 remote_qkey);

/* ---- Posting: chains, exact IBA 11.4.1.1 ------------------------------ */

int ibpost_post_send_list(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr);
int ibpost_post_recv_list(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
int ibpost_post_srq_recv_list(struct ibpost_srq *srq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr);
int ibpost_post_srq_recv(struct ibpost_srq *srq, void *context, void *addr,
			 size_t length, struct ibpost_mr *mr);

/* ---- Completions without callbacks ------------------------------------ */

/**
 * struct ibpost_comp - one returned context, for ibpost_get_*_comp()
 * @context: the context the WR was posted with (its wr_id)
 * @status: completion status
 * @opcode: completion opcode
 * @byte_len: bytes received (receive completions)
 * @imm_data: immediate data, in host order, when @wc_flags has
 *            IB_WC_WITH_IMM; else 0. (A callback's struct ib_wc holds it
 *            as the provider gave it, big-endian in ex.imm_data, as
 *            ib_core's consumers expect; a post takes it big-endian in
 *            ex.imm_data too. Only this field is in host order.)
 * @vendor_err: provider-specific error detail
 * @wc_flags: the completion's IB_WC_* flags (IB_WC_GRH, IB_WC_WITH_IMM,
 *            IB_WC_WITH_INVALIDATE, ...)
 * @invalidate_rkey: the rkey a received SEND_WITH_INV invalidated, when
 *                   @wc_flags has IB_WC_WITH_INVALIDATE; else 0
 * @src_qp: UD receives: the sender's QP number
 * @slid: UD receives: the sender's LID (IB)
 * @pkey_index: UD receives: the P_Key index
 * @sl: UD receives: the service level
 * @dlid_path_bits: UD receives: the destination LID's path bits (IB)
 * @network_hdr_type: UD receives on RoCE: the network header (enum
 *                    rdma_network_type), when @wc_flags has
 *                    IB_WC_WITH_NETWORK_HDR_TYPE
 *
 * The fields from @wc_flags on are those of struct ib_wc a receive
 * handler reads, so that a consumer polling a UD QP can reply.
 */
struct ibpost_comp {
	void *context;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	u32 imm_data;
	u32 vendor_err;
	int wc_flags;
	u32 invalidate_rkey;
	u32 src_qp;
	u32 slid;
	u16 pkey_index;
	u8 sl;
	u8 dlid_path_bits;
	u8 network_hdr_type;
};

int ibpost_get_send_comp(struct ibpost_qp *qp, struct ibpost_comp *comp,
			 long timeout_jiffies);
int ibpost_get_recv_comp(struct ibpost_qp *qp, struct ibpost_comp *comp,
			 long timeout_jiffies);
int ibpost_poll(struct ibpost_qp *qp, int budget);

#endif /* _RDMA_IBPOST_H */
