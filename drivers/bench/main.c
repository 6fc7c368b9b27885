// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_bench: compares ibpost with raw verbs on one loopback RC pair.
 *
 * Interface: /sys/kernel/debug/ibpost_bench/cmd (root only). Writing a
 * command line runs it inside the write(), which returns the byte count
 * on success and a negative errno (with one warning naming the problem)
 * on bad input or failure:
 *
 *   dev=rxe0 mode=raw|chain|seed op=send|write|read size=<bytes>
 *	chain=<WRs per post call> signal=<signal interval>
 *	iters=<measured WRs> warmup=<WRs before timing>
 *	mrs=<source buffers, each registered on its own, used in turn>
 *	inline=1 (SEND and WRITE: the data inline in every WR)
 *	sges=<SGEs per WR, 1..4: the source in that many pieces>
 *	bh=1 (post with bottom halves disabled: post_ns then leaves out
 *	the provider's softirq work, which a post call could otherwise
 *	run wherever it enables bottom halves or is interrupted)
 *   dev=rxe0 mode=raw-poll|chain-poll|seed-poll op=write|send ...
 *	the same, with completions busy-polled (IB_POLL_DIRECT)
 *   dev=siw0 addr=<IPv4 address of its netdev> mode=... (an iWARP device:
 *	the bandwidth modes above only, the pair connected through rdma_cm)
 *   dev=rxe0 mode=lat-raw|lat-chain|lat-seed op=write|send size=<bytes>
 *	iters=<round trips> warmup=<round trips>
 *   dev=rxe0 mode=lat-raw-poll|lat-chain-poll|lat-seed-poll ...
 *	the same, with completions busy-polled (IB_POLL_DIRECT)
 *   dev=rxe0 mode=scale-raw|scale-chain op=... size=... chain=... signal=...
 *	pairs=<loopback pairs> threads=<posting threads> depth=<WRs per queue>
 *	iters=<WRs of all pairs together> warmup=<WRs>
 *	shared_cq=1 (every QP's CQs from ib_core's CQ pool, shared)
 *   dev=rxe0 mode=mem-raw|mem-ibpost obj=qp depth=<WRs per queue>
 *	count=<QPs>, or obj=mr op=send|write|read size=<bytes> count=<MRs>
 *	(kernel memory taken per object)
 *   dev=rxe0 mode=destroy-raw|destroy-ibpost op=send size=<bytes>
 *	depth=<WRs per queue>   (the teardown of a pair whose receive
 *	queues are full, every receive flushed back)
 *   mode=calib size=<bytes> iters=<passes>   (memcpy and crc32 speed)
 *
 * depth= (default 256) applies to every mode's QPs. Reading returns the
 * last run's result as one line of key=value pairs:
 *
 *   mode op size mrs inline sges dev chain signal iters bh msgs_per_s
 *	mib_per_s post_ns elapsed_ns			   (bandwidth)
 *   mode op size iters median_ns p99_ns min_ns            (latency modes)
 *   mode op size pairs threads shared_cq chain signal iters bh msgs_per_s
 *	mib_per_s post_ns elapsed_ns			   (scaling modes)
 *   mode obj op size depth count bytes_per_obj slab_bytes_per_obj (memory)
 *   mode op size depth wrs destroy_ns                     (destroy modes)
 *   mode op size error                                    (a failed run)
 *
 * Each run sets up a fresh pair and buffers and tears them down again;
 * runs are serialized. As an ibpost client the module hears of device
 * removal: a run on that device is stopped and torn down before the
 * removal goes on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "bench.h"

#define BENCH_CMD_MAX	512	/* bytes of a command line */

const struct bench_mode_info bench_modes[BENCH_NR_MODES] = {
	[BENCH_RAW] = { "raw", BENCH_KIND_BW, true },
	[BENCH_CHAIN] = { "chain", BENCH_KIND_BW },
	[BENCH_SEED] = { "seed", BENCH_KIND_BW, false, true },
	[BENCH_RAW_POLL] = { "raw-poll", BENCH_KIND_BW, true, false, true },
	[BENCH_CHAIN_POLL] = { "chain-poll", BENCH_KIND_BW, false, false,
			       true },
	[BENCH_SEED_POLL] = { "seed-poll", BENCH_KIND_BW, false, true, true },
	[BENCH_LAT_RAW] = { "lat-raw", BENCH_KIND_LAT, true },
	[BENCH_LAT_CHAIN] = { "lat-chain", BENCH_KIND_LAT },
	[BENCH_LAT_SEED] = { "lat-seed", BENCH_KIND_LAT, false, true },
	[BENCH_LAT_RAW_POLL] = { "lat-raw-poll", BENCH_KIND_LAT, true,
				 false, true },
	[BENCH_LAT_CHAIN_POLL] = { "lat-chain-poll", BENCH_KIND_LAT, false,
				   false, true },
	[BENCH_LAT_SEED_POLL] = { "lat-seed-poll", BENCH_KIND_LAT, false,
				  true, true },
	[BENCH_SCALE_RAW] = { "scale-raw", BENCH_KIND_SCALE, true },
	[BENCH_SCALE_CHAIN] = { "scale-chain", BENCH_KIND_SCALE },
	[BENCH_MEM_RAW] = { "mem-raw", BENCH_KIND_MEM, true },
	[BENCH_MEM_IBPOST] = { "mem-ibpost", BENCH_KIND_MEM },
	[BENCH_DESTROY_RAW] = { "destroy-raw", BENCH_KIND_DESTROY, true },
	[BENCH_DESTROY_IBPOST] = { "destroy-ibpost", BENCH_KIND_DESTROY },
	[BENCH_CALIB] = { "calib", BENCH_KIND_CALIB },
};

static const char * const bench_op_names[] = {
	[BENCH_OP_SEND] = "send",
	[BENCH_OP_WRITE] = "write",
	[BENCH_OP_READ] = "read",
};

static const char * const bench_obj_names[] = {
	[BENCH_OBJ_QP] = "qp",
	[BENCH_OBJ_MR] = "mr",
};

static DEFINE_MUTEX(bench_run_mutex);		/* one run at a time */
static DEFINE_MUTEX(bench_result_mutex);	/* bench_result */
static char bench_result[BENCH_RESULT_MAX];
static struct dentry *bench_dir;

/* The run in progress, for device removal; gen counts finished runs. */
static DEFINE_SPINLOCK(bench_active_lock);
static struct bench_run *bench_active;
static unsigned long bench_active_gen;
static DECLARE_WAIT_QUEUE_HEAD(bench_idle_wq);

/* ---- Commands ------------------------------------------------------ */

static u32 *bench_cfg_u32(struct bench_cfg *cfg, const char *key)
{
	if (!strcmp(key, "size"))
		return &cfg->size;
	if (!strcmp(key, "chain"))
		return &cfg->chain;
	if (!strcmp(key, "signal"))
		return &cfg->signal;
	if (!strcmp(key, "iters"))
		return &cfg->iters;
	if (!strcmp(key, "warmup"))
		return &cfg->warmup;
	if (!strcmp(key, "bh"))
		return &cfg->bh;
	if (!strcmp(key, "depth"))
		return &cfg->depth;
	if (!strcmp(key, "pairs"))
		return &cfg->pairs;
	if (!strcmp(key, "threads"))
		return &cfg->threads;
	if (!strcmp(key, "count"))
		return &cfg->count;
	if (!strcmp(key, "mrs"))
		return &cfg->mrs;
	if (!strcmp(key, "inline"))
		return &cfg->inl;
	if (!strcmp(key, "sges"))
		return &cfg->sges;
	if (!strcmp(key, "shared_cq"))
		return &cfg->shared_cq;
	return NULL;
}

static int bench_parse_mode(struct bench_cfg *cfg, const char *val)
{
	int i;

	for (i = 0; i < BENCH_NR_MODES; i++) {
		if (!strcmp(val, bench_modes[i].name)) {
			cfg->mode = i;
			cfg->has_mode = true;
			return 0;
		}
	}
	pr_warn("mode=%.40s: expected raw, chain, seed, raw-poll, chain-poll, seed-poll, lat-raw, lat-chain, lat-seed, lat-raw-poll, lat-chain-poll, lat-seed-poll, scale-raw, scale-chain, mem-raw, mem-ibpost, destroy-raw, destroy-ibpost or calib\n",
		val);
	return -EINVAL;
}

static int bench_parse_pair(struct bench_cfg *cfg, const char *key,
			    const char *val)
{
	u32 *num;
	int i;

	if (!strcmp(key, "dev")) {
		if (!*val || strscpy(cfg->dev, val, sizeof(cfg->dev)) < 0) {
			pr_warn("dev=%.40s is not a device name\n", val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "addr")) {
		if (!*val || strscpy(cfg->addr, val, sizeof(cfg->addr)) < 0) {
			pr_warn("addr=%.40s is not an IPv4 address\n", val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "mode"))
		return bench_parse_mode(cfg, val);
	if (!strcmp(key, "obj")) {
		i = match_string(bench_obj_names, ARRAY_SIZE(bench_obj_names),
				 val);
		if (i < 0) {
			pr_warn("obj=%.40s: expected qp or mr\n", val);
			return -EINVAL;
		}
		cfg->obj = i;
		return 0;
	}
	if (!strcmp(key, "op")) {
		i = match_string(bench_op_names, ARRAY_SIZE(bench_op_names),
				 val);
		if (i < 0) {
			pr_warn("op=%.40s: expected send, write or read\n",
				val);
			return -EINVAL;
		}
		cfg->op = i;
		return 0;
	}
	num = bench_cfg_u32(cfg, key);
	if (!num) {
		pr_warn("unknown key '%.40s'\n", key);
		return -EINVAL;
	}
	if (kstrtou32(val, 0, num)) {
		pr_warn("%s=%.40s is not a number\n", key, val);
		return -EINVAL;
	}
	return 0;
}

/* A number key must be in @min..@max. */
static int bench_check_range(const char *key, u32 val, u32 min, u32 max)
{
	if (val >= min && val <= max)
		return 0;
	pr_warn("%s=%u: must be %u..%u\n", key, val, min, max);
	return -EINVAL;
}

/* The keys of the scaling, memory, queue depth and variant settings. */
static int bench_check_more(const struct bench_cfg *cfg)
{
	bool bw = bench_modes[cfg->mode].kind == BENCH_KIND_BW;

	if (cfg->depth &&
	    bench_check_range("depth", cfg->depth, 2, BENCH_MAX_DEPTH))
		return -EINVAL;
	if (cfg->mrs > 1 && !bw) {
		pr_warn("mrs=%u: MR rotation is for mode=raw, chain or seed\n",
			cfg->mrs);
		return -EINVAL;
	}
	if ((u64)cfg->mrs * cfg->size > BENCH_MAX_ROT_BYTES) {
		pr_warn("mrs=%u size=%u: the rotation's buffers would exceed %u MiB\n",
			cfg->mrs, cfg->size, BENCH_MAX_ROT_BYTES >> 20);
		return -EINVAL;
	}
	if (cfg->inl > 1 || (cfg->inl && (!bw || cfg->op == BENCH_OP_READ ||
					  cfg->mrs > 1))) {
		pr_warn("inline=%u: 0, or 1 for a SEND or WRITE bandwidth mode with one MR\n",
			cfg->inl);
		return -EINVAL;
	}
	if (cfg->shared_cq > 1 || (cfg->shared_cq &&
				   bench_modes[cfg->mode].kind != BENCH_KIND_SCALE)) {
		pr_warn("shared_cq=%u: 0, or 1 for a scaling mode\n",
			cfg->shared_cq);
		return -EINVAL;
	}
	if (cfg->sges > 1 && (!bw || cfg->inl || cfg->mrs > 1 ||
			      cfg->sges > cfg->size)) {
		pr_warn("sges=%u: more than 1 only for a bandwidth mode with one MR, no inline data and at least a byte per SGE\n",
			cfg->sges);
		return -EINVAL;
	}
	return bench_check_range("sges", cfg->sges, 1, BENCH_MAX_SGES) ?:
	       bench_check_range("pairs", cfg->pairs, 1, BENCH_MAX_PAIRS) ?:
	       bench_check_range("threads", cfg->threads, 1,
				 BENCH_MAX_THREADS) ?:
	       bench_check_range("count", cfg->count, 1, BENCH_MAX_COUNT) ?:
	       bench_check_range("mrs", cfg->mrs, 1, BENCH_MAX_MRS);
}

static int bench_check_cfg(const struct bench_cfg *cfg)
{
	if (!cfg->has_mode) {
		pr_warn("mode= is required\n");
		return -EINVAL;
	}
	if (bench_check_more(cfg))
		return -EINVAL;
	if (!cfg->size || cfg->size > BENCH_MAX_SIZE) {
		pr_warn("size=%u: must be 1..%u bytes\n", cfg->size,
			BENCH_MAX_SIZE);
		return -EINVAL;
	}
	if (!cfg->chain || cfg->chain > BENCH_MAX_CHAIN) {
		pr_warn("chain=%u: must be 1..%u\n", cfg->chain,
			BENCH_MAX_CHAIN);
		return -EINVAL;
	}
	if (!cfg->signal || cfg->signal > BENCH_MAX_SIGNAL) {
		pr_warn("signal=%u: must be 1..%u\n", cfg->signal,
			BENCH_MAX_SIGNAL);
		return -EINVAL;
	}
	if (!cfg->iters || cfg->iters > BENCH_MAX_ITERS) {
		pr_warn("iters=%u: must be 1..%u\n", cfg->iters,
			BENCH_MAX_ITERS);
		return -EINVAL;
	}
	if (cfg->warmup > BENCH_MAX_ITERS) {
		pr_warn("warmup=%u: must be 0..%u\n", cfg->warmup,
			BENCH_MAX_ITERS);
		return -EINVAL;
	}
	if (cfg->bh > 1) {
		pr_warn("bh=%u: must be 0 or 1\n", cfg->bh);
		return -EINVAL;
	}
	if (bench_modes[cfg->mode].kind == BENCH_KIND_DESTROY &&
	    cfg->op != BENCH_OP_SEND) {
		pr_warn("mode=%s takes op=send (its receive queues are what is full)\n",
			bench_modes[cfg->mode].name);
		return -EINVAL;
	}
	/* Polled: no READ, whose sink registration would wait for a poll. */
	if ((bench_modes[cfg->mode].kind == BENCH_KIND_LAT ||
	     bench_modes[cfg->mode].poll) && cfg->op == BENCH_OP_READ) {
		pr_warn("mode=%s takes op=write or op=send\n",
			bench_modes[cfg->mode].name);
		return -EINVAL;
	}
	return 0;
}

/* Parse "key=value ..." into @cfg, over the defaults. */
static int bench_parse(char *line, struct bench_cfg *cfg)
{
	char *tok, *val;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	strscpy(cfg->dev, "rxe0", sizeof(cfg->dev));
	cfg->op = BENCH_OP_WRITE;
	cfg->size = 4096;
	cfg->chain = 1;
	cfg->signal = 16;
	cfg->iters = 10000;
	cfg->warmup = 1000;
	cfg->pairs = 1;
	cfg->threads = 1;
	cfg->count = 32;
	cfg->mrs = 1;
	cfg->sges = 1;

	while ((tok = strsep(&line, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val) {
			pr_warn("'%.40s' is not key=value\n", tok);
			return -EINVAL;
		}
		*val++ = '\0';
		ret = bench_parse_pair(cfg, tok, val);
		if (ret)
			return ret;
	}
	return bench_check_cfg(cfg);
}

/* ---- Results ------------------------------------------------------- */

static void bench_store_result(const char *line)
{
	mutex_lock(&bench_result_mutex);
	strscpy(bench_result, line, sizeof(bench_result));
	mutex_unlock(&bench_result_mutex);
}

/* A bandwidth or scaling result's figures, after @head. */
static void bench_format_bw(const struct bench_cfg *cfg,
			    const struct bench_result *res, const char *head,
			    char *buf, size_t len)
{
	u32 frac;
	u64 mib;

	mib = div_u64_rem(res->mib_x100, 100, &frac);
	scnprintf(buf, len,
		  "%s chain=%u signal=%u iters=%llu bh=%u msgs_per_s=%llu mib_per_s=%llu.%02u post_ns=%llu elapsed_ns=%llu\n",
		  head, res->chain, res->signal, res->wrs, cfg->bh,
		  res->msgs_per_s, mib, frac, res->post_ns, res->elapsed_ns);
}

static void bench_format(const struct bench_cfg *cfg,
			 const struct bench_result *res, int err,
			 char *buf, size_t len)
{
	const char *mode = bench_modes[cfg->mode].name;
	const char *op = bench_op_names[cfg->op];
	char head[160];

	if (err) {
		scnprintf(buf, len, "mode=%s op=%s size=%u error=%d\n",
			  mode, op, cfg->size, err);
		return;
	}
	switch (bench_modes[cfg->mode].kind) {
	case BENCH_KIND_LAT:
		scnprintf(buf, len,
			  "mode=%s op=%s size=%u iters=%u median_ns=%u p99_ns=%u min_ns=%u\n",
			  mode, op, cfg->size, cfg->iters, res->median_ns,
			  res->p99_ns, res->min_ns);
		break;
	case BENCH_KIND_MEM:
		scnprintf(buf, len,
			  "mode=%s obj=%s op=%s size=%u depth=%u count=%u bytes_per_obj=%lld slab_bytes_per_obj=%lld\n",
			  mode, bench_obj_names[cfg->obj], op, cfg->size,
			  cfg->depth ?: BENCH_QUEUE_DEPTH, cfg->count,
			  res->obj_bytes, res->slab_bytes);
		break;
	case BENCH_KIND_DESTROY:
		scnprintf(buf, len,
			  "mode=%s op=%s size=%u depth=%u wrs=%llu destroy_ns=%llu\n",
			  mode, op, cfg->size, cfg->depth ?: BENCH_QUEUE_DEPTH,
			  res->wrs, res->elapsed_ns);
		break;
	case BENCH_KIND_SCALE:
		scnprintf(head, sizeof(head),
			  "mode=%s op=%s size=%u pairs=%u threads=%u shared_cq=%u",
			  mode, op, cfg->size, cfg->pairs, cfg->threads,
			  cfg->shared_cq);
		bench_format_bw(cfg, res, head, buf, len);
		break;
	default:
		scnprintf(head, sizeof(head),
			  "mode=%s op=%s size=%u mrs=%u inline=%u sges=%u dev=%s",
			  mode, op, cfg->size, cfg->mrs, cfg->inl, cfg->sges,
			  cfg->dev);
		bench_format_bw(cfg, res, head, buf, len);
		break;
	}
}

/* The one warning of a failed run. */
static void bench_report(const struct bench_run *run, int err)
{
	const struct bench_cfg *cfg = run->cfg;

	if (run->wc_failed)
		pr_warn("mode=%s op=%s size=%u: %s completion on QP %c failed: %s (%d)\n",
			bench_modes[cfg->mode].name, bench_op_names[cfg->op],
			cfg->size, run->wc_send ? "send" : "receive",
			run->wc_side, ib_wc_status_msg(run->wc_status),
			run->wc_status);
	else
		pr_warn("mode=%s op=%s size=%u: %s: %d\n",
			bench_modes[cfg->mode].name, bench_op_names[cfg->op],
			cfg->size, run->why ?: "run failed", err);
}

/* ---- Runs ---------------------------------------------------------- */

/* Take the device and publish the run, atomically against its removal. */
static int bench_attach(struct bench_run *run)
{
	struct ibpost_dev *dev;

	spin_lock(&bench_active_lock);
	dev = ibpost_dev_get(run->cfg->dev);
	if (!IS_ERR(dev)) {
		run->dev = dev;
		bench_active = run;
	}
	spin_unlock(&bench_active_lock);
	if (IS_ERR(dev))
		return bench_fail(run, PTR_ERR(dev), "no such ibpost device");
	return 0;
}

static void bench_detach(struct bench_run *run)
{
	spin_lock(&bench_active_lock);
	bench_active = NULL;
	bench_active_gen++;
	spin_unlock(&bench_active_lock);
	wake_up_all(&bench_idle_wq);
	ibpost_dev_put(run->dev);
}

static int bench_execute(struct bench_run *run, struct bench_result *res)
{
	int (*engine)(struct bench_run *run, struct bench_result *res);
	int ret, ret2;

	run->ibdev = ibpost_dev_ibdev(run->dev);
	run->pd = ibpost_dev_pd(run->dev);
	if (!run->ibdev || !run->pd)
		return bench_fail(run, -ENODEV, "the device is gone");
	run->iwarp = rdma_protocol_iwarp(run->ibdev,
					 rdma_start_port(run->ibdev));
	/* Pairs through rdma_cm: one pair, the bandwidth engine's. */
	if (run->iwarp && bench_modes[run->cfg->mode].kind != BENCH_KIND_BW)
		return bench_fail(run, -EOPNOTSUPP,
				  "iWARP: only mode=raw, chain, seed and their -poll");
	switch (bench_modes[run->cfg->mode].kind) {
	case BENCH_KIND_SCALE:
		/* Sets up and tears down its own pairs. */
		return bench_scale(run, res);
	case BENCH_KIND_LAT:
		engine = bench_lat;
		break;
	case BENCH_KIND_MEM:
		engine = bench_mem;
		break;
	case BENCH_KIND_DESTROY:
		/* Times the teardown itself. */
		ret = run->ops->setup(run);
		return ret ?: bench_destroy(run, res);
	default:
		engine = bench_bw;
		break;
	}
	ret = run->ops->setup(run);
	if (ret)
		return ret;
	ret = engine(run, res);
	ret2 = bench_pair_teardown(run);
	return ret ?: ret2;
}

static int bench_run_cmd(const struct bench_cfg *cfg)
{
	char line[BENCH_RESULT_MAX];
	struct bench_result res = {};
	struct bench_run *run;
	int ret;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	bench_run_init(run, cfg, NULL);
	ret = bench_attach(run);
	if (!ret) {
		ret = bench_execute(run, &res);
		bench_detach(run);
	}
	if (ret) {
		ret = READ_ONCE(run->err) ?: ret;
		bench_report(run, ret);
	}
	bench_format(cfg, &res, ret, line, sizeof(line));
	bench_store_result(line);
	kvfree(run->rtt);
	kfree(run->post.wrs);
	kfree(run);
	return ret;
}

/* ibpost is removing @dev: stop a run on it and wait for its teardown. */
static void bench_dev_remove(struct ibpost_dev *dev)
{
	unsigned long gen = 0;
	bool busy = false;

	spin_lock(&bench_active_lock);
	if (bench_active && bench_active->dev == dev) {
		bench_fail(bench_active, -ENODEV, "the device is being removed");
		gen = bench_active_gen;
		busy = true;
	}
	spin_unlock(&bench_active_lock);
	if (busy)
		wait_event(bench_idle_wq, READ_ONCE(bench_active_gen) != gen);
}

static struct ibpost_client bench_client = {
	.name = KBUILD_MODNAME,
	.remove = bench_dev_remove,
};

/* ---- debugfs ------------------------------------------------------- */

static ssize_t bench_cmd_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct bench_cfg cfg;
	char *line;
	int ret;

	if (!count || count > BENCH_CMD_MAX) {
		pr_warn("a command is 1..%d bytes\n", BENCH_CMD_MAX);
		return -EINVAL;
	}
	line = memdup_user_nul(ubuf, count);
	if (IS_ERR(line))
		return PTR_ERR(line);
	ret = bench_parse(line, &cfg);
	kfree(line);
	if (ret)
		return ret;

	if (mutex_lock_interruptible(&bench_run_mutex))
		return -EINTR;
	if (bench_modes[cfg.mode].kind == BENCH_KIND_CALIB) {
		char res[BENCH_RESULT_MAX];

		ret = bench_calib(&cfg, res, sizeof(res));
		if (!ret)
			bench_store_result(res);
	} else {
		ret = bench_run_cmd(&cfg);
	}
	mutex_unlock(&bench_run_mutex);
	if (ret)
		return ret;
	return count;
}

static ssize_t bench_cmd_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char line[BENCH_RESULT_MAX];

	mutex_lock(&bench_result_mutex);
	memcpy(line, bench_result, sizeof(line));
	mutex_unlock(&bench_result_mutex);
	return simple_read_from_buffer(ubuf, count, ppos, line,
				       strnlen(line, sizeof(line)));
}

static const struct file_operations bench_cmd_fops = {
	.owner = THIS_MODULE,
	.read = bench_cmd_read,
	.write = bench_cmd_write,
	.llseek = default_llseek,
};

static int __init bench_init(void)
{
	int ret;

	ret = ibpost_register_client(&bench_client);
	if (ret)
		return ret;
	bench_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("cmd", 0600, bench_dir, NULL, &bench_cmd_fops);
	return 0;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	ibpost_unregister_client(&bench_client);
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_DESCRIPTION("ibpost benchmark: ibpost against raw verbs on a loopback RC pair");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(IBPOST_NS);
