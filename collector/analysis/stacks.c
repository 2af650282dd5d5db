/*
 * The stacks of a model; see stacks.h.
 *
 * The stacks form a trie: a node is (parent node, label), interned, so
 * that identical stacks meet in one node whatever order their executions
 * come in.  Each execution adds its weight to its node.
 */
#include "analysis/stacks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"

#define NONE PT_STACKS_NONE

static uint32_t node(struct pt_stacks *t, uint32_t parent, const char *label,
		     size_t len, struct pt_sb *key)
{
	uint32_t id;
	int added;

	pt_sb_reset(key);
	pt_sb_add(key, &parent, sizeof parent);
	pt_sb_add(key, label, len);
	id = pt_strtab_intern(&t->keys, key->buf, key->len, &added);
	if (!added)
		return id;
	t->n = t->keys.n;
	if (id >= t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->parent = pt_xrealloc(t->parent, t->cap * sizeof *t->parent);
		t->first = pt_xrealloc(t->first, t->cap * sizeof *t->first);
		t->last = pt_xrealloc(t->last, t->cap * sizeof *t->last);
		t->next = pt_xrealloc(t->next, t->cap * sizeof *t->next);
		t->weight = pt_xrealloc(t->weight, t->cap * sizeof *t->weight);
	}
	t->parent[id] = parent;
	t->first[id] = t->last[id] = t->next[id] = NONE;
	t->weight[id] = 0;
	/* Children in order of first appearance: the output follows time. */
	if (parent != NONE) {
		if (t->last[parent] == NONE)
			t->first[parent] = id;
		else
			t->next[t->last[parent]] = id;
		t->last[parent] = id;
	}
	return id;
}

/* Clean a label as stacks.h says. */
static void frame_label(struct pt_sb *sb)
{
	size_t i, b = 0, e = sb->len;

	for (i = 0; i < sb->len; i++)
		if (sb->buf[i] == ';')
			sb->buf[i] = ',';
		else if (sb->buf[i] == '\n' || sb->buf[i] == '\r' ||
			 sb->buf[i] == '\t')
			sb->buf[i] = ' ';
	while (b < e && sb->buf[b] == ' ')
		b++;
	while (e > b && sb->buf[e - 1] == ' ')
		e--;
	memmove(sb->buf, sb->buf + b, e - b);
	sb->len = e - b;
	sb->buf[sb->len] = '\0';
	if (!sb->len)
		pt_sb_addch(sb, '?');
}

static int64_t exec_weight(const struct pt_analysis *a,
			   const struct pt_exec *e, enum pt_stacks_weight w)
{
	if (w == PT_STACKS_WALL)
		return a->self_ns[e->id];
	/* Unknown CPU counts as none rather than guessing. */
	return pt_exec_cpu_us(e);
}

static void add_exec(struct pt_stacks *t, const struct pt_analysis *a,
		     const struct pt_exec *e, uint32_t parent,
		     enum pt_stacks_weight w, uint32_t *nodes,
		     struct pt_sb *label, struct pt_sb *key)
{
	uint32_t depth = a->depth[e->id];

	if (depth > PT_STACKS_MAX_DEPTH && e->parent) {
		/* Below the cap: all in the parent's "..." frame. */
		nodes[e->id] = nodes[e->parent->id];
	} else {
		pt_sb_reset(label);
		if (depth == PT_STACKS_MAX_DEPTH && e->parent)
			pt_sb_addstr(label, "...");
		else {
			pt_exec_label(e, label);
			frame_label(label);
		}
		nodes[e->id] = node(t, parent, label->buf, label->len, key);
	}
	/* Saturate: a damaged capture's absurd times must not wrap around. */
	if (__builtin_add_overflow(t->weight[nodes[e->id]], exec_weight(a, e, w),
				   &t->weight[nodes[e->id]]))
		t->weight[nodes[e->id]] = INT64_MAX;
}

void pt_stacks_build(struct pt_stacks *t, const struct pt_model *m,
		     enum pt_stacks_weight w)
{
	struct pt_analysis a;
	struct pt_sb label = PT_SB_INIT, key = PT_SB_INIT;
	uint32_t *nodes, *capnode;
	size_t nc = m->ncaptures ? m->ncaptures : 1, i;

	memset(t, 0, sizeof *t);
	pt_strtab_init(&t->keys);
	pt_analyze_tree(&a, m);
	nodes = pt_xmalloc((m->n ? m->n : 1) * sizeof *nodes);
	memset(nodes, 0xff, (m->n ? m->n : 1) * sizeof *nodes);
	capnode = pt_xmalloc(nc * sizeof *capnode);
	for (i = 0; i < nc; i++) {
		const char *host = pt_model_meta(m, i, "host");

		capnode[i] = NONE;
		if (m->ncaptures < 2)
			continue;
		/* Several captures: each under a frame of its own. */
		pt_sb_reset(&label);
		pt_sb_addf(&label, "capture %zu %s", i + 1, host ? host : "");
		frame_label(&label);
		capnode[i] = node(t, NONE, label.buf, label.len, &key);
	}
	/* Parents before children: walk each root's tree in preorder. */
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *x = m->execs[i];

		if (x->parent)
			continue;
		add_exec(t, &a, x, capnode[x->capture], w, nodes, &label,
			 &key);
		for (;;) {
			if (x->first_child) {
				x = x->first_child;
			} else {
				while (x->parent && !x->next_sibling)
					x = x->parent;
				if (!x->parent)
					break;
				x = x->next_sibling;
			}
			add_exec(t, &a, x, nodes[x->parent->id], w, nodes,
				 &label, &key);
		}
	}
	/* Whatever no root reaches (a corrupt parent cycle) stands alone. */
	for (i = 0; i < m->n; i++)
		if (nodes[i] == NONE)
			add_exec(t, &a, m->execs[i],
				 capnode[m->execs[i]->capture], w, nodes,
				 &label, &key);
	/* Wall time is summed in ns and rounded once per stack. */
	if (w == PT_STACKS_WALL)
		for (i = 0; i < t->n; i++) {
			int64_t v = t->weight[i];

			t->weight[i] = v / 1000 + (v % 1000 >= 500); /* no v + 500 */
		}

	pt_sb_release(&label);
	pt_sb_release(&key);
	free(nodes);
	free(capnode);
	pt_analysis_free(&a);
}

void pt_stacks_free(struct pt_stacks *t)
{
	free(t->parent);
	free(t->first);
	free(t->last);
	free(t->next);
	free(t->weight);
	pt_strtab_free(&t->keys);
	memset(t, 0, sizeof *t);
}
