/* Chrome Trace Event Format files; see chrome.h. */
#include "capture/chrome.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonp.h"
#include "base/strbuf.h"

/* B events waiting for their E, over all threads of a file. */
#define MAX_OPEN 1024

struct parse {
	struct pt_jp jp;
	pt_chrome_intern *intern;
	pt_chrome_emit *emit;
	void *arg;
	size_t max;
	struct pt_chrome_info *info;
	struct pt_chrome_event open[MAX_OPEN];
	const char *open_id[MAX_OPEN];  /* b/e: "cat id"; B/E: NULL */
	size_t nopen;
	struct pt_sb tmp;
	int between;                    /* the parse stopped between events */
};

static const char *str_of(struct parse *ps, const struct pt_jnode *n)
{
	if (!n || n->type != PT_J_STR)
		return ps->intern(ps->arg, "", 0);
	return ps->intern(ps->arg, pt_jp_str(&ps->jp, n), n->len);
}

static int num_of(const struct pt_jnode *n, double *v)
{
	if (!n || n->type != PT_J_NUM || n->num != n->num)
		return 0;
	*v = n->num;
	return 1;
}

/*
 * n as a whole id (pid, tid), when it is a number an int64_t holds:
 * converting a larger double is undefined, and a file may say 1e300.
 */
static int id_of(const struct pt_jnode *n, int64_t *v)
{
	double d;

	if (!num_of(n, &d) || !(d > -9.2e18 && d < 9.2e18))
		return 0;
	*v = (int64_t)d;
	return 1;
}

/* Is n an object of at least one member, all of them numbers? */
static int all_numbers(const struct pt_jp *jp, const struct pt_jnode *n)
{
	uint32_t k;

	if (!n || n->type != PT_J_OBJ || n->first == PT_J_NONE)
		return 0;
	for (k = n->first; k != PT_J_NONE; k = jp->node[k].next)
		if (jp->node[k].type != PT_J_NUM ||
		    jp->node[k].num != jp->node[k].num ||
		    jp->node[k].num > 1e300 || jp->node[k].num < -1e300)
			return 0;
	return 1;
}

static void emit(struct parse *ps, const struct pt_chrome_event *ev)
{
	if (ps->info->kept >= ps->max) {
		ps->info->skipped++;
		return;
	}
	ps->info->kept++;
	ps->emit(ps->arg, ev);
}

/* One element of the events array, parsed into the pool at v. */
static void one_event(struct parse *ps, uint32_t v)
{
	const struct pt_jp *jp = &ps->jp;
	const struct pt_jnode *ph = pt_jp_get(jp, v, "ph"), *args, *n;
	struct pt_chrome_event ev;
	const char *id = NULL;
	uint32_t a;
	double d;
	size_t i;

	if (!ph || ph->type != PT_J_STR || ph->len != 1) {
		ps->info->skipped++;
		return;
	}
	memset(&ev, 0, sizeof ev);
	ev.ph = pt_jp_str(jp, ph)[0];
	if (ev.ph == 'M')
		return;                 /* names of processes and threads */
	if (ev.ph == 'I')
		ev.ph = 'i';
	if (!strchr("XBEbeiC", ev.ph) || !num_of(pt_jp_get(jp, v, "ts"),
					       &ev.ts_us)) {
		ps->info->skipped++;
		return;
	}
	id_of(pt_jp_get(jp, v, "pid"), &ev.pid);
	id_of(pt_jp_get(jp, v, "tid"), &ev.tid);
	if (ev.ph == 'b' || ev.ph == 'e') {
		/* Async: paired by category and id, not by thread. */
		n = pt_jp_get(jp, v, "id");
		if (!n || (n->type != PT_J_NUM && n->type != PT_J_STR)) {
			ps->info->skipped++;
			return;
		}
		pt_sb_reset(&ps->tmp);
		pt_jp_write(jp, pt_jp_get(jp, v, "cat") ?
			    (uint32_t)(pt_jp_get(jp, v, "cat") - jp->node) :
			    (uint32_t)(n - jp->node), &ps->tmp);
		pt_sb_addch(&ps->tmp, ' ');
		pt_jp_write(jp, (uint32_t)(n - jp->node), &ps->tmp);
		id = ps->intern(ps->arg, ps->tmp.buf, ps->tmp.len);
		ev.ph = ev.ph == 'b' ? 'B' : 'E';
	}
	if (ev.ph == 'E') {
		/* The latest B of the same thread, or b of the same id. */
		for (i = ps->nopen; i-- > 0;)
			if (id ? ps->open_id[i] == id :
			    (!ps->open_id[i] && ps->open[i].pid == ev.pid &&
			     ps->open[i].tid == ev.tid))
				break;
		if (i == (size_t)-1 || ev.ts_us < ps->open[i].ts_us) {
			ps->info->skipped++;
			return;
		}
		ev = ps->open[i];
		ev.ph = 'X';
		if (num_of(pt_jp_get(jp, v, "ts"), &d))
			ev.dur_us = d - ev.ts_us;
		/* Those opened after it on its thread are left open. */
		memmove(&ps->open[i], &ps->open[i + 1],
			(ps->nopen - i - 1) * sizeof *ps->open);
		memmove(&ps->open_id[i], &ps->open_id[i + 1],
			(ps->nopen - i - 1) * sizeof *ps->open_id);
		ps->nopen--;
		emit(ps, &ev);
		return;
	}
	ev.name = str_of(ps, pt_jp_get(jp, v, "name"));
	ev.cat = str_of(ps, pt_jp_get(jp, v, "cat"));
	ev.arg_pid = -1;
	args = pt_jp_get(jp, v, "args");
	if (args && args->type == PT_J_OBJ && args->first != PT_J_NONE) {
		a = (uint32_t)(args - jp->node);
		pt_sb_reset(&ps->tmp);
		pt_jp_write(jp, a, &ps->tmp);
		ev.args = ps->intern(ps->arg, ps->tmp.buf, ps->tmp.len);
		if ((n = pt_jp_get(jp, a, "detail")) && n->type == PT_J_STR)
			ev.detail = str_of(ps, n);
		if (num_of(pt_jp_get(jp, a, "pid"), &d) && d > 0 &&
		    d < 4294967296.0)
			ev.arg_pid = (int64_t)d;
	} else if (args && args->type == PT_J_ARR && args->first != PT_J_NONE) {
		/* dune 2 gives a process's arguments as a list. */
		pt_sb_reset(&ps->tmp);
		pt_jp_write(jp, (uint32_t)(args - jp->node), &ps->tmp);
		ev.list = ps->intern(ps->arg, ps->tmp.buf, ps->tmp.len);
		pt_sb_reset(&ps->tmp);
		pt_sb_addf(&ps->tmp, "{\"list\":%s}", ev.list);
		ev.args = ps->intern(ps->arg, ps->tmp.buf, ps->tmp.len);
	}
	if (ev.ph == 'C' && !all_numbers(jp, args)) {
		/* A counter's series are numbers, or no consumer plots it. */
		ps->info->skipped++;
		return;
	}
	if (ev.ph == 'X' && (!num_of(pt_jp_get(jp, v, "dur"), &ev.dur_us) ||
			     ev.dur_us < 0)) {
		ps->info->skipped++;
		return;
	}
	if (ev.ph == 'B') {
		if (ps->nopen == MAX_OPEN) {
			ps->info->skipped++;
			return;
		}
		ps->open_id[ps->nopen] = id;
		ps->open[ps->nopen++] = ev;
		return;
	}
	emit(ps, &ev);
}

static void events(struct parse *ps)
{
	unsigned seen = 0;
	uint32_t v;

	if (!pt_jp_open(&ps->jp, '[')) {
		if (!ps->jp.err)
			ps->jp.err = "traceEvents is not an array";
		return;
	}
	for (;;) {
		ps->between = 1;
		if (!pt_jp_next(&ps->jp, ']', &seen))
			return;
		/* A writer that streams its events leaves a comma last. */
		if (seen > 1 && pt_jp_at_end(&ps->jp))
			return;
		ps->between = 0;
		if ((v = pt_jp_value(&ps->jp)) == PT_J_NONE)
			return;
		if (ps->jp.node[v].type == PT_J_OBJ)
			one_event(ps, v);
		else
			ps->info->skipped++;
	}
}

int pt_chrome_parse(const char *buf, size_t len, size_t max_events,
		    pt_chrome_intern *intern, pt_chrome_emit *emitf, void *arg,
		    struct pt_chrome_info *info)
{
	static struct parse zero;
	struct parse *ps = pt_xmalloc(sizeof *ps);
	unsigned seen = 0;
	uint32_t v;
	double d;
	int array, rc;

	*ps = zero;
	memset(info, 0, sizeof *info);
	ps->intern = intern;
	ps->emit = emitf;
	ps->arg = arg;
	ps->max = max_events;
	ps->info = info;
	pt_sb_init(&ps->tmp);
	pt_jp_init(&ps->jp, buf, len);
	/* Array form: the events themselves; the object form has them under
	 * traceEvents, the other members are metadata. */
	array = pt_jp_open(&ps->jp, '[');
	if (array) {
		ps->jp.p--;
		events(ps);
	} else if (pt_jp_open(&ps->jp, '{')) {
		while (pt_jp_next(&ps->jp, '}', &seen)) {
			if (!strcmp(pt_jp_key(&ps->jp), "traceEvents")) {
				events(ps);
			} else if (!strcmp(pt_jp_key(&ps->jp),
					   "beginningOfTime")) {
				v = pt_jp_value(&ps->jp);
				if (num_of(pt_jp_node(&ps->jp, v), &d)) {
					info->has_epoch = 1;
					info->epoch_us = d;
				}
			} else {
				pt_jp_skip(&ps->jp);
			}
		}
	} else if (!ps->jp.err) {
		ps->jp.err = "not a JSON array or object";
	}
	/* The array form may end without its bracket (the format allows it
	 * for files of programs that were killed). */
	if (array && ps->jp.cut && ps->between)
		ps->jp.err = NULL;
	else if (!ps->jp.err && !pt_jp_at_end(&ps->jp))
		ps->jp.err = "text after the end";
	if (ps->jp.err) {
		info->err = ps->jp.err;
		info->err_at = ps->jp.err_at;
		info->cut = ps->jp.cut;
	}
	info->skipped += ps->nopen;     /* B without E */
	rc = info->err ? -1 : 0;
	pt_jp_free(&ps->jp);
	pt_sb_release(&ps->tmp);
	free(ps);
	return rc;
}
