// SPDX-License-Identifier: GPL-2.0
/*
 * The seed operations: librdmacm's rdma_post_send/recv/read/write and
 * their vector forms, for kernel buffers.
 *
 * Operation: each call builds one WR from kernel virtual addresses,
 * translating every address inside its MR to the DMA address (and
 * checking [addr, addr + length) lies inside the registration), and posts
 * it through the chain path with the MRs already known, so the contract's
 * checks, accounting and completion rules are the same. A one-SGE
 * operation builds its SGE on the stack; a vector one, of up to the
 * granted SGEs, in its queue's scratch (ibpost_seed_vector()): the
 * provider copies the SGEs during the post call and the slot keeps its
 * own list of MRs, so the scratch is free again when the call returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "post.h"
#include "mr_table.h"
#include "srq.h"

struct ibpost_seed {
	struct ib_sge *sge;
	struct ibpost_mr **mrs;
	int nsge;
	bool inline_data;
	struct ib_sge one_sge;
	struct ibpost_mr *one_mr;
};

/*
 * Translate @sgl into @s (whose arrays hold @granted entries), for WRs
 * that take at most @granted SGEs: one SGE per buffer, or, in a page MR,
 * one per DMA segment the buffer spans.
 */
static int ibpost_seed_sgl(struct ibpost_seed *s, struct ibpost_sge *sgl,
			   int nsge, int flags, u32 granted)
{
	int i, j, n, k = 0;

	/* Checked before @sgl is read: never walk past what may exist. */
	if (nsge < 0 || nsge > granted || (nsge && !sgl)) {
		pr_warn_ratelimited("post: %d SGEs, at most %u granted\n",
				    nsge, granted);
		return -EINVAL;
	}
	s->inline_data = flags & IB_SEND_INLINE;
	for (i = 0; i < nsge; i++, k += n) {
		n = 1;
		if (s->inline_data) {
			/* Inline data is copied by the CPU at post time. */
			s->sge[k].addr = (uintptr_t)sgl[i].addr;
			s->sge[k].length = sgl[i].length;
			s->sge[k].lkey = 0;
			continue;
		}
		if (!sgl[i].mr) {
			pr_warn_ratelimited("post: SGE %d has no MR and the WR is not inline\n",
					    i);
			return -EINVAL;
		}
		if (sgl[i].mr->segs)
			n = ibpost_mr_va_sgl(sgl[i].mr, sgl[i].addr,
					     sgl[i].length, &s->sge[k],
					     granted - k);
		else if (k == granted ||
			 ibpost_mr_sge(sgl[i].mr, sgl[i].addr, sgl[i].length,
				       &s->sge[k]))
			n = -EINVAL;
		if (n < 0) {
			pr_warn_ratelimited("post: SGE %d [%p, +%u) is outside its MR, or its pages take more than the %u SGEs granted\n",
					    i, sgl[i].addr, sgl[i].length,
					    granted);
			return -EINVAL;
		}
		for (j = 0; j < n; j++)
			s->mrs[k + j] = sgl[i].mr;
	}
	s->nsge = k;
	return 0;
}

/*
 * A seed operation refused before the post path, for its buffers: count
 * it there too, under the lock as the post path takes it (the caller may
 * have interrupts disabled: no _bh lock). The QP's state is checked first
 * there, so a QP that takes no post (-ENODEV, -ENOTCONN) says so here too.
 */
static int ibpost_seed_refused(struct ibpost_qp *qp, bool send, int err)
{
	struct ibpost_queue *q = send ? &qp->sq : &qp->rq;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	err = ibpost_state_check(qp, send) ?: err;
	ibpost_stats_refused(&q->stats, err);
	spin_unlock_irqrestore(&q->lock, flags);
	return err;
}

/* ibpost_seed_one(): the buffer needs the vector form (a queue's scratch). */
#define IBPOST_SEED_SPANS 1

/*
 * One SGE, on the stack: a buffer inside its MR translated inline, a page
 * MR's buffer over several DMA segments left to the vector form
 * (IBPOST_SEED_SPANS), any other case to ibpost_seed_sgl(), which names
 * the rule it breaks.
 * Forced inline, as ibpost_seed_rdma().
 */
static __always_inline int ibpost_seed_one(struct ibpost_seed *s, void *addr,
					   size_t length, struct ibpost_mr *mr,
					   int flags)
{
	struct ibpost_sge sge = { .addr = addr, .length = length, .mr = mr };

	s->sge = &s->one_sge;
	s->mrs = &s->one_mr;
	if (likely(mr && !(flags & IB_SEND_INLINE) && length <= U32_MAX &&
		   !__ibpost_mr_sge(mr, addr, length, &s->one_sge))) {
		s->nsge = 1;
		s->inline_data = false;
		s->one_mr = mr;
		return 0;
	}
	if (length > U32_MAX)
		return -EINVAL;
	/* A page MR's buffer over several segments: the vector form's. */
	if (mr && mr->segs && !(flags & IB_SEND_INLINE))
		return IBPOST_SEED_SPANS;
	return ibpost_seed_sgl(s, &sge, 1, flags, 1);
}

static inline int ibpost_seed_post(struct ibpost_qp *qp,
				   struct ibpost_seed *s,
				   struct ib_send_wr *wr,
				   void *context, int flags)
{
	wr->wr_id = (uintptr_t)context;
	wr->sg_list = s->sge;
	wr->num_sge = s->nsge;
	wr->send_flags = flags;
	return ibpost_post_send_mrs(qp, wr, NULL,
				    s->inline_data ? NULL : s->mrs, NULL);
}

/*
 * Forced inline: left to GCC (with ibpost_seed_one() too), it is a call of
 * its own and the seed WRITE and READ take 25 instructions more per call
 * (IBPOST_BENCH_ICOUNT=1, 6.12, 64 B: 764/800 against 739/775).
 */
static __always_inline int ibpost_seed_rdma(struct ibpost_qp *qp,
					    struct ibpost_seed *s,
					    enum ib_wr_opcode op,
					    void *context, int flags,
					    u64 remote_addr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.remote_addr = remote_addr,
		.rkey = rkey,
	};

	return ibpost_seed_post(qp, s, &wr.wr, context, flags);
}

static inline int ibpost_seed_recv(struct ibpost_qp *qp,
				   struct ibpost_seed *s,
				   void *context)
{
	struct ib_recv_wr wr = {
		.wr_id = (uintptr_t)context,
		.sg_list = s->sge,
		.num_sge = s->nsge,
	};

	return ibpost_post_recv_mrs(qp, &wr, NULL, s->mrs);
}

/*
 * A vector seed operation: @sgl translated into its queue's seed scratch,
 * under the scratch's lock (taken with interrupts disabled, as the post
 * path's own, and before it), and posted as @wr (NULL: a receive).
 */
static int ibpost_seed_vector(struct ibpost_qp *qp, struct ib_send_wr *wr,
			      void *context, struct ibpost_sge *sgl, int nsge,
			      int flags)
{
	struct ibpost_seed_scratch *scratch = &qp->seed[wr ? 0 : 1];
	struct ibpost_seed s = { .sge = scratch->sge, .mrs = scratch->mrs };
	u32 granted = wr ? qp->attr.max_send_sge : qp->attr.max_recv_sge;
	unsigned long irq;
	bool built;
	int ret;

	spin_lock_irqsave(&scratch->lock, irq);
	ret = ibpost_seed_sgl(&s, sgl, nsge, flags, granted);
	built = !ret;
	if (built)
		ret = wr ? ibpost_seed_post(qp, &s, wr, context, flags) :
			   ibpost_seed_recv(qp, &s, context);
	spin_unlock_irqrestore(&scratch->lock, irq);
	/* The post path counts its own refusals, not this one. */
	if (!built)
		ret = ibpost_seed_refused(qp, !!wr, ret);
	return ret;
}

/* A one-buffer seed operation whose buffer spans a page MR's segments. */
static int ibpost_seed_spans(struct ibpost_qp *qp, struct ib_send_wr *wr,
			     void *context, void *addr, size_t length,
			     struct ibpost_mr *mr, int flags)
{
	struct ibpost_sge sge = { .addr = addr, .length = length, .mr = mr };

	return ibpost_seed_vector(qp, wr, context, &sge, 1, flags);
}

/*
 * A one-buffer READ or WRITE (@op). Forced inline, as ibpost_seed_rdma():
 * left to GCC it is one function for both, and the seed WRITE and READ
 * take 16 instructions more per call (IBPOST_BENCH_ICOUNT=1, 6.1, 64 B:
 * 675/676 against 659/661).
 */
static __always_inline int ibpost_seed_rdma_buf(struct ibpost_qp *qp,
						enum ib_wr_opcode op,
						void *context, void *addr,
						size_t length,
						struct ibpost_mr *mr, int flags,
						u64 remote_addr, u32 rkey)
{
	struct ibpost_seed s;
	int ret;

	ret = ibpost_seed_one(&s, addr, length, mr, flags);
	if (ret == IBPOST_SEED_SPANS) {
		struct ib_rdma_wr wr = {
			.wr.opcode = op,
			.remote_addr = remote_addr,
			.rkey = rkey,
		};

		return ibpost_seed_spans(qp, &wr.wr, context, addr, length,
					 mr, flags);
	}
	if (ret)
		return ibpost_seed_refused(qp, true, ret);
	return ibpost_seed_rdma(qp, &s, op, context, flags, remote_addr,
				rkey);
}

/**
 * ibpost_post_send - post one SEND from a registered kernel buffer
 * @qp: a connected QP (RC) or a QP in RTS
 * @context: returned in the completion
 * @addr: kernel virtual address inside @mr's buffer, or of the data with
 *        IB_SEND_INLINE
 * @length: bytes to send
 * @mr: the registration holding [@addr, @addr + @length); NULL only with
 *      IB_SEND_INLINE
 * @flags: IB_SEND_SIGNALED, IB_SEND_INLINE, IB_SEND_FENCE,
 *         IB_SEND_SOLICITED
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_send(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr, int flags)
{
	/* A UD QP's send is read as an ib_ud_wr: no AH here, -EINVAL. */
	struct ib_ud_wr wr = { .wr.opcode = IB_WR_SEND };
	struct ibpost_seed s;
	int ret;

	ret = ibpost_seed_one(&s, addr, length, mr, flags);
	if (ret == IBPOST_SEED_SPANS)
		return ibpost_seed_spans(qp, &wr.wr, context, addr, length,
					 mr, flags);
	if (ret)
		return ibpost_seed_refused(qp, true, ret);
	return ibpost_seed_post(qp, &s, &wr.wr, context, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_send, IBPOST_NS);

/**
 * ibpost_post_sendv - post one SEND gathered from several buffers
 * @qp: the QP
 * @context: returned in the completion
 * @sgl: the pieces, each inside its MR (or inline data)
 * @nsge: entries in @sgl, at most the granted max_send_sge
 * @flags: as ibpost_post_send()
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_sendv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge, int flags)
{
	/* As in ibpost_post_send(): sized for a UD QP's reading. */
	struct ib_ud_wr wr = { .wr.opcode = IB_WR_SEND };

	return ibpost_seed_vector(qp, &wr.wr, context, sgl, nsge, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_sendv, IBPOST_NS);

/**
 * ibpost_post_recv - post one receive into a registered kernel buffer
 * @qp: the QP (INIT or later)
 * @context: returned in the completion
 * @addr: kernel virtual address inside @mr's buffer
 * @length: bytes available
 * @mr: the registration holding [@addr, @addr + @length)
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_recv_list().
 */
int ibpost_post_recv(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr)
{
	struct ibpost_seed s;
	int ret;

	ret = ibpost_seed_one(&s, addr, length, mr, 0);
	if (ret == IBPOST_SEED_SPANS)
		return ibpost_seed_spans(qp, NULL, context, addr, length, mr,
					 0);
	if (ret)
		return ibpost_seed_refused(qp, false, ret);
	return ibpost_seed_recv(qp, &s, context);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_recv, IBPOST_NS);

/**
 * ibpost_post_srq_recv - post one receive into a shared receive queue
 * @srq: the SRQ
 * @context: returned in the completion (in ib_cqe mode, its struct ib_cqe)
 * @addr: kernel virtual address inside @mr's buffer
 * @length: bytes available
 * @mr: the registration holding [@addr, @addr + @length)
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_srq_recv_list().
 */
int ibpost_post_srq_recv(struct ibpost_srq *srq, void *context, void *addr,
			 size_t length, struct ibpost_mr *mr)
{
	struct ib_recv_wr wr = { .wr_id = (uintptr_t)context };
	struct ibpost_seed s;
	int ret;

	if (!srq)
		return -EINVAL;
	ret = ibpost_seed_one(&s, addr, length, mr, 0);
	if (ret == IBPOST_SEED_SPANS) {
		pr_warn_ratelimited("post_srq_recv: a buffer outside its page MR, or over several of its pages (ibpost_post_srq_recv_list() with ibpost_mr_sgl() takes those)\n");
		return -EINVAL;
	}
	if (ret)
		return ret;
	wr.sg_list = s.sge;
	wr.num_sge = s.nsge;
	return ibpost_post_srq_recv_mrs(srq, &wr, NULL, s.mrs);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_srq_recv, IBPOST_NS);

/**
 * ibpost_post_recvv - post one receive scattered over several buffers
 * @qp: the QP (INIT or later)
 * @context: returned in the completion
 * @sgl: the pieces, each inside its MR
 * @nsge: entries in @sgl, at most the granted max_recv_sge
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_recv_list().
 */
int ibpost_post_recvv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge)
{
	return ibpost_seed_vector(qp, NULL, context, sgl, nsge, 0);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_recvv, IBPOST_NS);

/**
 * ibpost_post_read - RDMA READ from a peer's buffer into a local one
 * @qp: a connected RC QP
 * @context: returned in the completion
 * @addr: kernel virtual address inside @mr's buffer, where the data lands
 * @length: bytes to read
 * @mr: the registration holding [@addr, @addr + @length)
 * @flags: IB_SEND_SIGNALED, IB_SEND_FENCE (not on iWARP: siw cannot fence
 *         a READ)
 * @remote_addr: the peer's address (ibpost_mr_remote_addr() there)
 * @rkey: the peer's key (ibpost_mr_rkey() there)
 *
 * On iWARP the sink is registered for this READ alone (the consumer does
 * nothing); one registration maps at most 256 pages there, so a longer
 * READ is -EINVAL. A QP whose initiator depth (max_rd_atomic, on iWARP the
 * connection's ORD) is 0 may issue no READ: -EINVAL.
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_read(struct ibpost_qp *qp, void *context, void *addr,
		     size_t length, struct ibpost_mr *mr, int flags,
		     u64 remote_addr, u32 rkey)
{
	return ibpost_seed_rdma_buf(qp, IB_WR_RDMA_READ, context, addr, length, mr,
				    flags, remote_addr, rkey);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_read, IBPOST_NS);

/**
 * ibpost_post_readv - RDMA READ scattered into several local buffers
 * @qp: a connected RC QP
 * @context: returned in the completion
 * @sgl: the local pieces, each inside its MR
 * @nsge: entries in @sgl, at most the granted max_send_sge and the
 *        device's READ limit (attrs.max_sge_rd; one on iWARP, whose READ
 *        response lands in a single tagged buffer)
 * @flags: IB_SEND_SIGNALED, IB_SEND_FENCE (not on iWARP)
 * @remote_addr: the peer's address
 * @rkey: the peer's key
 *
 * A READ is never split: more SGEs than the device's READ limit are
 * refused with -EINVAL before the provider is called, so one context
 * always stands for one READ.
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_readv(struct ibpost_qp *qp, void *context,
		      struct ibpost_sge *sgl, int nsge, int flags,
		      u64 remote_addr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_READ,
		.remote_addr = remote_addr,
		.rkey = rkey,
	};

	return ibpost_seed_vector(qp, &wr.wr, context, sgl, nsge, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_readv, IBPOST_NS);

/**
 * ibpost_post_write - RDMA WRITE from a local buffer to a peer's
 * @qp: a connected RC QP
 * @context: returned in the completion
 * @addr: kernel virtual address inside @mr's buffer (or of inline data)
 * @length: bytes to write
 * @mr: the registration holding the data; NULL only with IB_SEND_INLINE
 * @flags: as ibpost_post_send()
 * @remote_addr: the peer's address
 * @rkey: the peer's key
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_write(struct ibpost_qp *qp, void *context, void *addr,
		      size_t length, struct ibpost_mr *mr, int flags,
		      u64 remote_addr, u32 rkey)
{
	return ibpost_seed_rdma_buf(qp, IB_WR_RDMA_WRITE, context, addr, length, mr,
				    flags, remote_addr, rkey);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_write, IBPOST_NS);

/**
 * ibpost_post_writev - RDMA WRITE gathered from several local buffers
 * @qp: a connected RC QP
 * @context: returned in the completion
 * @sgl: the local pieces, each inside its MR (or inline data)
 * @nsge: entries in @sgl, at most the granted max_send_sge
 * @flags: as ibpost_post_send()
 * @remote_addr: the peer's address
 * @rkey: the peer's key
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list().
 */
int ibpost_post_writev(struct ibpost_qp *qp, void *context,
		       struct ibpost_sge *sgl, int nsge, int flags,
		       u64 remote_addr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.remote_addr = remote_addr,
		.rkey = rkey,
	};

	return ibpost_seed_vector(qp, &wr.wr, context, sgl, nsge, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_writev, IBPOST_NS);

/**
 * ibpost_post_ud_send - post one datagram on a UD QP
 * @qp: a UD QP
 * @context: returned in the completion
 * @addr: kernel virtual address inside @mr's buffer (or of inline data)
 * @length: bytes to send, at most the path MTU
 * @mr: the registration holding the data; NULL only with IB_SEND_INLINE
 * @flags: as ibpost_post_send()
 * @ah: the address handle of the destination
 * @remote_qpn: the destination QP number
 * @remote_qkey: the destination's Q_Key; with its high bit set, @qp's
 *               own (IBA), as it is at the post
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list(); -EINVAL on a
 * QP that is not UD (a QP that takes no post says -ENOTCONN or -ENODEV
 * first).
 */
int ibpost_post_ud_send(struct ibpost_qp *qp, void *context, void *addr,
			size_t length, struct ibpost_mr *mr, int flags,
			struct ib_ah *ah, u32 remote_qpn, u32 remote_qkey)
{
	struct ib_ud_wr wr = {
		.wr.opcode = IB_WR_SEND,
		.ah = ah,
		.remote_qpn = remote_qpn,
		.remote_qkey = remote_qkey,
	};
	struct ibpost_seed s;
	int ret;

	/* On RC the datagram's address would be dropped without a word. */
	if (qp->attr.qp_type != IB_QPT_UD) {
		pr_warn_ratelimited("post: %s() on qp %u, which is not a UD QP\n",
				    __func__, qp->rqp.qpn);
		return ibpost_seed_refused(qp, true, -EINVAL);
	}
	ret = ibpost_seed_one(&s, addr, length, mr, flags);
	if (ret == IBPOST_SEED_SPANS)
		return ibpost_seed_spans(qp, &wr.wr, context, addr, length,
					 mr, flags);
	if (ret)
		return ibpost_seed_refused(qp, true, ret);
	return ibpost_seed_post(qp, &s, &wr.wr, context, flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_ud_send, IBPOST_NS);

/*
 * The offset form: [@offset, +@length) of @mr, one SGE per DMA segment,
 * translated in its queue's scratch as a vector operation's, posted as
 * @wr (NULL: a receive).
 */
static int ibpost_seed_at(struct ibpost_qp *qp, struct ib_send_wr *wr,
			  void *context, struct ibpost_mr *mr, u64 offset,
			  u32 length, int flags)
{
	struct ibpost_seed_scratch *scratch = &qp->seed[wr ? 0 : 1];
	struct ibpost_seed s = { .sge = scratch->sge, .mrs = scratch->mrs };
	u32 granted = wr ? qp->attr.max_send_sge : qp->attr.max_recv_sge;
	unsigned long irq;
	int i, n, ret;

	spin_lock_irqsave(&scratch->lock, irq);
	n = ibpost_mr_sgl(mr, offset, length, s.sge, max_t(u32, granted, 1));
	if (n < 0 || n > granted) {
		spin_unlock_irqrestore(&scratch->lock, irq);
		pr_warn_ratelimited("post: [%llu, +%u) is empty or outside its MR, or its pages take more than the %u SGEs granted\n",
				    offset, length, granted);
		return ibpost_seed_refused(qp, !!wr, -EINVAL);
	}
	for (i = 0; i < n; i++)
		s.mrs[i] = mr;
	s.nsge = n;
	s.inline_data = false;
	ret = wr ? ibpost_seed_post(qp, &s, wr, context, flags) :
		   ibpost_seed_recv(qp, &s, context);
	spin_unlock_irqrestore(&scratch->lock, irq);
	return ret;
}

/**
 * ibpost_post_mr - post one SEND, WRITE or READ of part of an MR
 * @qp: a connected RC QP (a UD QP's SEND needs an address:
 *      ibpost_post_ud_send())
 * @context: returned in the completion
 * @opcode: IB_WR_SEND, IB_WR_RDMA_WRITE or IB_WR_RDMA_READ
 * @mr: the MR (any kind: a page MR is addressed by offset only)
 * @offset: the first byte, from the start of the MR's memory
 * @length: bytes, more than 0, all inside @mr
 * @flags: IB_SEND_SIGNALED, IB_SEND_FENCE, IB_SEND_SOLICITED (no
 *         IB_SEND_INLINE: the data is in @mr)
 * @remote_addr: WRITE and READ: the peer's address; else unused
 * @rkey: WRITE and READ: the peer's key; else unused
 *
 * The range may span the pages of a page MR: it takes one SGE per DMA
 * segment, at most the granted max_send_sge (a READ at most the device's
 * READ limit: one on iWARP, where a READ over two segments is -EINVAL).
 * Memory ibpost mapped is synced as for every WR.
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_send_list(); -EINVAL for
 * another opcode, IB_SEND_INLINE, no MR, a UD QP, or a range that is
 * empty, outside @mr or over more segments than the WR may have SGEs.
 */
int ibpost_post_mr(struct ibpost_qp *qp, void *context,
		   enum ib_wr_opcode opcode, struct ibpost_mr *mr, u64 offset,
		   u32 length, int flags, u64 remote_addr, u32 rkey)
{
	/* Sized for a UD QP's reading of a SEND, as ibpost_post_send(). */
	union {
		struct ib_rdma_wr rdma;
		struct ib_ud_wr ud;
	} wr = {};

	if ((opcode != IB_WR_SEND && opcode != IB_WR_RDMA_WRITE &&
	     opcode != IB_WR_RDMA_READ) || !mr || (flags & IB_SEND_INLINE)) {
		pr_warn_ratelimited("post_mr: opcode %d, flags %#x: SEND, WRITE or READ of an MR, not inline\n",
				    opcode, flags);
		return ibpost_seed_refused(qp, true, -EINVAL);
	}
	if (qp->attr.qp_type == IB_QPT_UD) {
		pr_warn_ratelimited("post_mr: qp %u is UD: a datagram needs an address (ibpost_post_ud_send())\n",
				    qp->rqp.qpn);
		return ibpost_seed_refused(qp, true, -EINVAL);
	}
	wr.rdma.wr.opcode = opcode;
	if (opcode != IB_WR_SEND) {
		wr.rdma.remote_addr = remote_addr;
		wr.rdma.rkey = rkey;
	}
	return ibpost_seed_at(qp, &wr.rdma.wr, context, mr, offset, length,
			      flags);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_mr, IBPOST_NS);

/**
 * ibpost_post_recv_mr - post one receive into part of an MR
 * @qp: the QP (INIT or later)
 * @context: returned in the completion
 * @mr: the MR (any kind)
 * @offset: the first byte, from the start of the MR's memory
 * @length: bytes available, more than 0, all inside @mr
 *
 * As ibpost_post_mr(), at most the granted max_recv_sge segments.
 *
 * Context: Any context but hard IRQ.
 * Return: 0 or a negative errno, as ibpost_post_recv_list(); -EINVAL for
 * no MR or a bad range, as ibpost_post_mr().
 */
int ibpost_post_recv_mr(struct ibpost_qp *qp, void *context,
			struct ibpost_mr *mr, u64 offset, u32 length)
{
	return ibpost_seed_at(qp, NULL, context, mr, offset, length, 0);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_recv_mr, IBPOST_NS);
