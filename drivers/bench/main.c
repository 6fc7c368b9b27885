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
 *	bh=1 (post with bottom halves disabled: post_ns then leaves out
 *	the provider's softirq work, which the unlock of ibpost's _bh lock
 *	would otherwise run inside its post call)
 *   dev=rxe0 mode=lat-raw|lat-chain|lat-seed op=write|send size=<bytes>
 *	iters=<round trips> warmup=<round trips>
 *   mode=calib size=<bytes> iters=<passes>   (memcpy and crc32 speed)
 *
 * Reading returns the last run's result as one line of key=value pairs:
 *
 *   mode op size chain signal iters msgs_per_s mib_per_s post_ns elapsed_ns
 *   mode op size iters median_ns p99_ns min_ns            (latency modes)
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

static const char * const bench_mode_names[] = {
	[BENCH_RAW] = "raw",
	[BENCH_CHAIN] = "chain",
	[BENCH_SEED] = "seed",
	[BENCH_LAT_RAW] = "lat-raw",
	[BENCH_LAT_CHAIN] = "lat-chain",
	[BENCH_LAT_SEED] = "lat-seed",
	[BENCH_CALIB] = "calib",
};

static const char * const bench_op_names[] = {
	[BENCH_OP_SEND] = "send",
	[BENCH_OP_WRITE] = "write",
	[BENCH_OP_READ] = "read",
};

static const enum ib_wr_opcode bench_opcodes[] = {
	[BENCH_OP_SEND] = IB_WR_SEND,
	[BENCH_OP_WRITE] = IB_WR_RDMA_WRITE,
	[BENCH_OP_READ] = IB_WR_RDMA_READ,
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
	return NULL;
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
	if (!strcmp(key, "mode")) {
		i = match_string(bench_mode_names,
				 ARRAY_SIZE(bench_mode_names), val);
		if (i < 0) {
			pr_warn("mode=%.40s: expected raw, chain, seed, lat-raw, lat-chain, lat-seed or calib\n",
				val);
			return -EINVAL;
		}
		cfg->mode = i;
		cfg->has_mode = true;
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

static int bench_check_cfg(const struct bench_cfg *cfg)
{
	if (!cfg->has_mode) {
		pr_warn("mode= is required\n");
		return -EINVAL;
	}
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
	if (bench_mode_is_lat(cfg->mode) && cfg->op == BENCH_OP_READ) {
		pr_warn("mode=%s takes op=write or op=send\n",
			bench_mode_names[cfg->mode]);
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

static void bench_format(const struct bench_cfg *cfg,
			 const struct bench_result *res, int err,
			 char *buf, size_t len)
{
	const char *mode = bench_mode_names[cfg->mode];
	const char *op = bench_op_names[cfg->op];
	u32 frac;
	u64 mib;

	if (err) {
		scnprintf(buf, len, "mode=%s op=%s size=%u error=%d\n",
			  mode, op, cfg->size, err);
	} else if (bench_mode_is_lat(cfg->mode)) {
		scnprintf(buf, len,
			  "mode=%s op=%s size=%u iters=%u median_ns=%u p99_ns=%u min_ns=%u\n",
			  mode, op, cfg->size, cfg->iters, res->median_ns,
			  res->p99_ns, res->min_ns);
	} else {
		mib = div_u64_rem(res->mib_x100, 100, &frac);
		scnprintf(buf, len,
			  "mode=%s op=%s size=%u chain=%u signal=%u iters=%u bh=%u msgs_per_s=%llu mib_per_s=%llu.%02u post_ns=%llu elapsed_ns=%llu\n",
			  mode, op, cfg->size, res->chain, res->signal,
			  cfg->iters, cfg->bh, res->msgs_per_s, mib, frac,
			  res->post_ns, res->elapsed_ns);
	}
}

/* The one warning of a failed run. */
static void bench_report(const struct bench_run *run, int err)
{
	const struct bench_cfg *cfg = run->cfg;

	if (run->wc_failed)
		pr_warn("mode=%s op=%s size=%u: %s completion on QP %c failed: %s (%d)\n",
			bench_mode_names[cfg->mode], bench_op_names[cfg->op],
			cfg->size, run->wc_send ? "send" : "receive",
			run->wc_side, ib_wc_status_msg(run->wc_status),
			run->wc_status);
	else
		pr_warn("mode=%s op=%s size=%u: %s: %d\n",
			bench_mode_names[cfg->mode], bench_op_names[cfg->op],
			cfg->size, run->why ?: "run failed", err);
}

/* ---- Runs ---------------------------------------------------------- */

static void bench_run_init(struct bench_run *run, const struct bench_cfg *cfg)
{
	struct bench_side *sides[] = { &run->a, &run->b };
	unsigned int i;

	run->cfg = cfg;
	run->lat = bench_mode_is_lat(cfg->mode);
	run->seed = cfg->mode == BENCH_SEED || cfg->mode == BENCH_LAT_SEED;
	run->ops = cfg->mode == BENCH_RAW || cfg->mode == BENCH_LAT_RAW ?
		   &bench_raw_ops : &bench_ibp_ops;
	run->opcode = bench_opcodes[cfg->op];
	run->size = cfg->size;
	run->chain = run->seed ? 1 : cfg->chain;
	run->signal = run->lat ? BENCH_LAT_SIGNAL : cfg->signal;
	init_waitqueue_head(&run->wq);
	init_completion(&run->pong);
	spin_lock_init(&run->lock);
	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		sides[i]->run = run;
		sides[i]->peer = sides[!i];
		sides[i]->name = 'A' + i;
		sides[i]->txq.side = sides[i];
	}
}

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
	int ret;

	run->ibdev = ibpost_dev_ibdev(run->dev);
	run->pd = ibpost_dev_pd(run->dev);
	if (!run->ibdev || !run->pd)
		return bench_fail(run, -ENODEV, "the device is gone");
	ret = run->ops->setup(run);
	if (ret)
		return ret;
	ret = run->lat ? bench_lat(run, res) : bench_bw(run, res);
	bench_stop(run);
	run->ops->teardown(run);
	return ret;
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
	bench_run_init(run, cfg);
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
	kfree(run->wrs);
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
	if (cfg.mode == BENCH_CALIB) {
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
