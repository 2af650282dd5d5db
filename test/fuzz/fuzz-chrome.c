/*
 * Fuzz target: the Chrome trace parser (collector/capture/chrome.h) over
 * the bounded JSON parser (collector/base/jsonp.h), fed a trace file as
 * a program might have written it.  Whatever the input, the parse ends,
 * every event's strings are readable, and every args object it gives
 * back (written by jsonp.c) is itself valid JSON that parses whole.
 *
 * Built for libFuzzer (meson -Dfuzz=true, clang) or with replay.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonp.h"
#include "capture/chrome.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

struct arena {
	char **s;
	size_t n, cap;
};

static const char *intern(void *arg, const char *s, size_t n)
{
	struct arena *a = arg;
	char *c = malloc(n + 1);

	if (!c)
		abort();
	memcpy(c, s, n);
	c[n] = '\0';
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->s = realloc(a->s, a->cap * sizeof *a->s);
		if (!a->s)
			abort();
	}
	a->s[a->n++] = c;
	return c;
}

static void emit(void *arg, const struct pt_chrome_event *ev)
{
	(void)arg;
	sink += strlen(ev->name) + strlen(ev->cat) + (size_t)ev->ph;
	if (ev->detail)
		sink += strlen(ev->detail);
	if (ev->args) {
		struct pt_jp jp;

		pt_jp_init(&jp, ev->args, strlen(ev->args));
		if (pt_jp_value(&jp) == PT_J_NONE || !pt_jp_at_end(&jp))
			abort();        /* we wrote JSON that does not parse */
		pt_jp_free(&jp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_chrome_info info;
	struct arena a = { 0 };
	char *copy = malloc(size ? size : 1);   /* exact size, for ASan */
	size_t i;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pt_chrome_parse(copy, size, 10000, intern, emit, &a, &info);
	if (info.err && info.err_at > size)
		abort();
	for (i = 0; i < a.n; i++)
		free(a.s[i]);
	free(a.s);
	free(copy);
	return 0;
}
