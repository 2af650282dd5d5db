/*
 * The run's metadata: the META record at the start of a capture (host,
 * kernel, CPUs, the command, CI ids; doc/format.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/internal.h"
#include "pt-config.h"
#include "base/util.h"

/* ---- capture records ---- */

void pt_server_put_record(struct pt_server *s, struct conn *c,
		       enum pt_cap_kind kind, uint64_t now,
		       const void *data, size_t len)
{
	if (!s->w)
		return;
	/* Rounded up: a connection is never closed before anything its
	 * process sent. */
	if (kind != PT_CAP_FRAME)
		now = pt_recv_time(now);
	if (pt_writer_add(s->w, kind, c->id, c->pid, c->uid, now, data,
			  len) < 0 && kind == PT_CAP_FRAME)
		s->st.lost++;
}

void pt_server_write_meta(struct pt_server *s, const char *command)
{
	/* The CI's ids and URLs, which name the run in an OpenTelemetry
	 * export (export/otlp-spans.c) long after the job's environment is
	 * gone, and the W3C trace context a CI integration may hand down. */
	static const char *const ci_vars[] = {
		"CI_PIPELINE_ID", "CI_JOB_ID", "CI_JOB_NAME",
		"CI_PIPELINE_NAME", "CI_PROJECT_PATH", "CI_PIPELINE_URL",
		"CI_JOB_URL",
		"GITHUB_RUN_ID", "GITHUB_JOB", "GITHUB_RUN_ATTEMPT",
		"GITHUB_WORKFLOW", "GITHUB_REPOSITORY", "GITHUB_SERVER_URL",
		"TRACEPARENT",
	};
	char cpus[24], real[24], mono[24];
	const char *kv[2 * 32];
	struct pt_runinfo ri;
	struct utsname u;
	uint64_t m1, r, m2;
	size_t n = 0, i;

#define KV(k, v) (kv[2 * n] = (k), kv[2 * n + 1] = (v), n++)
	if (uname(&u) < 0)
		memset(&u, 0, sizeof u);
	/* The clock pair maps monotonic frame times to wall time: take the
	 * realtime reading between two monotonic ones and use their middle. */
	m1 = pt_mono_ns();
	r = pt_real_ns();
	m2 = pt_mono_ns();
	snprintf(cpus, sizeof cpus, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(real, sizeof real, "%llu", (unsigned long long)r);
	snprintf(mono, sizeof mono, "%llu",
		 (unsigned long long)(m1 + (m2 - m1) / 2));
	KV("host", u.nodename);
	KV("kernel", u.release);
	KV("cpus", cpus);
	KV("proftrace_version", PT_VERSION);
	KV("start_realtime_ns", real);
	KV("start_monotonic_ns", mono);
	if (command)
		KV("command", command);
	pt_runinfo_get(&ri);
#define KV_SET(k, v) do { if ((v)[0]) KV(k, v); } while (0)
	KV_SET("cpu_model", ri.cpu_model);
	KV_SET("mem_total_kb", ri.mem_total_kb);
	KV_SET("glibc_version", ri.glibc_version);
	KV_SET("cwd", ri.cwd);
	KV_SET("git_commit", ri.git_commit);
#undef KV_SET
	for (i = 0; i < sizeof ci_vars / sizeof ci_vars[0]; i++) {
		const char *v = getenv(ci_vars[i]);

		if (v)
			KV(ci_vars[i], v);
	}
#undef KV
	pt_writer_meta(s->w, kv, n);
}
