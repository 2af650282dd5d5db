/*
 * What env.c and envexec.c share, and no other file includes: the
 * variables read at load, and the tests of an entry or a list for them.
 */
#ifndef PT_ENV_H
#define PT_ENV_H

#include "pt-preload.h"
#include "pt-str.h"

/* The variables the library reads at load, by their index in it. */
enum { V_PRELOAD, V_SOCKET, V_DIR, V_LIST, V_TRACE, V_LOG, V_ADDED, V_FILES,
       V_COUNT };

/* Each one's "NAME=" and its length (env.c). */
struct pt_env_var {
	char name[24];
	size_t len;
};
extern const struct pt_env_var pt_env_vars[V_COUNT] PT_HIDDEN;

/* The index in pt_env_vars of the variable entry e sets, or -1. */
PT_HIDDEN int pt_env_var_index(const char *e);

/* The variables a PROFTRACE_ADDED value names, as a mask of their
 * indexes in pt_env_vars (never the marker's own). */
PT_HIDDEN unsigned pt_env_added_mask(const char *list);

/* Is the k-byte LD_PRELOAD item at p one of ours? */
#define is_ours(p, k) pt_item_is(p, k, PT_LIB_STEM)

#endif
