/* Masking secrets in command lines; see redact.h. */
#include "model/redact.h"

#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"

#define MASK "***"

/*
 * Old -> new, by pointer: argument vectors by their address, arguments
 * by their string id (pt_exec_arg_id(), + 1), as the model interns both,
 * so each distinct one is redacted once however many executions share
 * it.  Open addressing, at most half full.
 */
struct pmap {
	const void **key, **val;
	size_t cap, n;
};

struct pt_redact {
	regex_t *re;
	size_t n, cap;
	struct pmap strs, vecs;
	void **owned;                   /* what we allocated for the model */
	size_t nowned, capowned;
};

static size_t phash(const void *p, size_t cap)
{
	uint64_t k = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	return (size_t)(k >> 32) & (cap - 1);
}

static const void **pmap_slot(struct pmap *m, const void *k)
{
	size_t i;

	for (i = phash(k, m->cap); m->key[i] && m->key[i] != k;
	     i = (i + 1) & (m->cap - 1))
		;
	return &m->key[i];
}

/* The value stored for k, or NULL with *found 0. */
static const void *pmap_get(struct pmap *m, const void *k, int *found)
{
	const void **slot;

	*found = 0;
	if (!m->cap)
		return NULL;
	slot = pmap_slot(m, k);
	if (!*slot)
		return NULL;
	*found = 1;
	return m->val[slot - m->key];
}

static void pmap_put(struct pmap *m, const void *k, const void *v)
{
	const void **slot;

	if ((m->n + 1) * 2 > m->cap) {
		struct pmap old = *m;
		size_t i;

		m->cap = old.cap ? 2 * old.cap : 256;
		m->key = pt_xcalloc(m->cap, sizeof *m->key);
		m->val = pt_xcalloc(m->cap, sizeof *m->val);
		m->n = 0;
		for (i = 0; i < old.cap; i++)
			if (old.key[i])
				pmap_put(m, old.key[i], old.val[i]);
		free(old.key);
		free(old.val);
	}
	slot = pmap_slot(m, k);
	if (!*slot) {
		*slot = k;
		m->n++;
	}
	m->val[slot - m->key] = v;
}

static void pmap_free(struct pmap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

static void own(struct pt_redact *r, void *p)
{
	if (r->nowned == r->capowned) {
		r->capowned = r->capowned ? 2 * r->capowned : 64;
		r->owned = pt_xrealloc(r->owned, r->capowned * sizeof *r->owned);
	}
	r->owned[r->nowned++] = p;
}

struct pt_redact *pt_redact_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_redact));
}

int pt_redact_add(struct pt_redact *r, const char *regex)
{
	char msg[256];
	int rc;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4;
		r->re = pt_xrealloc(r->re, r->cap * sizeof *r->re);
	}
	rc = regcomp(&r->re[r->n], regex, REG_EXTENDED);
	if (rc != 0) {
		regerror(rc, &r->re[r->n], msg, sizeof msg);
		pt_warn("--redact '%s': %s", regex, msg);
		return -1;
	}
	r->n++;
	return 0;
}

/* Mask the matches of one pattern in s into out.  Returns 1 if any. */
static int mask_one(const regex_t *re, const char *s, struct pt_sb *out)
{
	const char *p = s;
	regmatch_t mt;
	int eflags = 0, any = 0;

	pt_sb_reset(out);
	while (regexec(re, p, 1, &mt, eflags) == 0) {
		if (mt.rm_eo == mt.rm_so) {
			/* An empty match masks nothing: step over one byte. */
			if (!p[mt.rm_so])
				break;
			pt_sb_add(out, p, (size_t)mt.rm_so + 1);
			p += mt.rm_so + 1;
		} else {
			pt_sb_add(out, p, (size_t)mt.rm_so);
			pt_sb_addstr(out, MASK);
			p += mt.rm_eo;
			any = 1;
		}
		eflags = REG_NOTBOL;    /* p is no longer the string's start */
		if (!*p)
			break;
	}
	pt_sb_addstr(out, p);
	return any;
}

char *pt_redact_string(const struct pt_redact *r, const char *s)
{
	struct pt_sb out = PT_SB_INIT;
	char *cur = NULL;
	size_t i;

	if (!r)
		return NULL;

	for (i = 0; i < r->n; i++) {
		if (!mask_one(&r->re[i], cur ? cur : s, &out))
			continue;
		free(cur);
		cur = pt_sb_detach(&out, NULL);
	}
	pt_sb_release(&out);
	return cur;
}

/*
 * The masked form of string s, whose string id is id (s itself if nothing
 * matched).  Cached by id, not by s: a long argument is handed out in a
 * buffer that the next command line reuses.
 */
static const char *redact_str(struct pt_redact *r, uint32_t id, const char *s)
{
	const void *key = (const void *)((uintptr_t)id + 1);
	const char *v;
	char *red;
	int found;

	v = pmap_get(&r->strs, key, &found);
	if (found)
		return v ? v : s;
	red = pt_redact_string(r, s);
	if (red)
		own(r, red);
	pmap_put(&r->strs, key, red);
	return red ? red : s;
}

/* Redact e's command line; executions that share a vector share the
 * result. */
static void redact_argv(struct pt_redact *r, struct pt_model *m,
			struct pt_exec *e)
{
	const void *old = e->argv_vec;
	const char **v;
	const void *got;
	size_t i;
	int found, changed = 0;

	got = pmap_get(&r->vecs, old, &found);
	if (found) {
		e->argv_vec = got;
		return;
	}
	v = pt_xcalloc(e->argc, sizeof *v);
	for (i = 0; i < e->argc; i++) {
		const char *s = pt_exec_arg(e, i);

		v[i] = redact_str(r, pt_exec_arg_id(e, i), s);
		changed |= v[i] != s;
	}
	if (changed)
		pt_exec_set_argv(m, e, v, e->argc);
	free(v);
	pmap_put(&r->vecs, old, e->argv_vec);
}

void pt_redact_model(struct pt_redact *r, struct pt_model *m)
{
	size_t i;

	if (!r || !r->n)
		return;
	for (i = 0; i < m->n && !m->lean; i++) {
		struct pt_exec *e = m->execs[i];

		if (e->argc)
			redact_argv(r, m, e);
	}
	for (i = 0; i < m->ncaptures; i++) {
		const char *cmd = pt_model_meta(m, i, "command");
		char *red = cmd ? pt_redact_string(r, cmd) : NULL;

		if (red)
			pt_model_set_meta(m, i, "command", red);
		free(red);
	}
}

void pt_redact_free(struct pt_redact *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	free(r->re);
	for (i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	pmap_free(&r->strs);
	pmap_free(&r->vecs);
	free(r);
}
