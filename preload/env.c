/*
 * The environment: what the library reads at load, what HELLO records, and
 * the repair that keeps children traced when a program hands them an
 * environment without LD_PRELOAD or PROFTRACE_* (env -i, execve with
 * {NULL}, Python's subprocess(env=...); design.md, pitfall 3).
 *
 * Repair runs in exec hooks, possibly in a vfork child: it builds the new
 * array in memory the caller provides on its stack and allocates nothing.
 */
#include <dlfcn.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pt-preload.h"

static const char *const allowlist[] = { PT_ENV_ALLOWLIST };

/* Copy "NAME=" value into dst as "NAME=value"; "" if it does not fit. */
static void set_entry(char *dst, size_t cap, const char *name, const char *val)
{
	size_t a = strlen(name), b = strlen(val);

	dst[0] = '\0';
	if (a + 1 + b + 1 > cap)
		return;
	memcpy(dst, name, a);
	dst[a] = '=';
	memcpy(dst + a + 1, val, b + 1);
}

static const char *lookup(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* Is `entry` one of the ':'- or ' '-separated items of list? */
static int list_has(const char *list, const char *entry, size_t len)
{
	const char *p = list;

	while (*p) {
		size_t k = strcspn(p, ": ");

		if (k == len && !strncmp(p, entry, len))
			return 1;
		p += k;
		p += *p != '\0';
	}
	return 0;
}

/* Our own item of LD_PRELOAD, as written there (it may hold $LIB). */
static void find_preload_entry(const char *preload)
{
	const char *p = preload;
	Dl_info info;

	while (p && *p) {
		size_t k = strcspn(p, ": ");
		const char *slash = memrchr(p, '/', k);
		const char *base = slash ? slash + 1 : p;

		if (k < sizeof pt.preload_entry &&
		    !strncmp(base, "libproftrace", 12)) {
			memcpy(pt.preload_entry, p, k);
			pt.preload_entry[k] = '\0';
			return;
		}
		p += k;
		p += *p != '\0';
	}
	/* Loaded some other way (ld.so.preload, a renamed copy): our path. */
	if (dladdr((void *)find_preload_entry, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof pt.preload_entry)
		strcpy(pt.preload_entry, info.dli_fname);
}

void pt_env_setup(char *const *envp)
{
	const char *sock = lookup(envp, PT_ENV_SOCKET);
	const char *dir = lookup(envp, PT_ENV_DIR);
	const char *list = lookup(envp, PT_ENV_LIST);
	char uid[16], *u = uid + sizeof uid;
	unsigned v = (unsigned)getuid();

	find_preload_entry(lookup(envp, "LD_PRELOAD"));
	if (pt.preload_entry[0])
		set_entry(pt.env_preload, sizeof pt.env_preload, "LD_PRELOAD",
			  pt.preload_entry);
	if (sock && strlen(sock) < sizeof pt.socket_path) {
		strcpy(pt.socket_path, sock);
		set_entry(pt.env_socket, sizeof pt.env_socket, PT_ENV_SOCKET, sock);
	} else {
		*--u = '\0';
		do
			*--u = (char)('0' + v % 10);
		while ((v /= 10));
		strcpy(pt.socket_path, PT_RUNDIR_PREFIX);
		strcat(pt.socket_path, u);
		strcat(pt.socket_path, "/" PT_SOCKET_NAME);
	}
	if (dir && strlen(dir) < sizeof pt.spool_dir) {
		strcpy(pt.spool_dir, dir);
		set_entry(pt.env_dir, sizeof pt.env_dir, PT_ENV_DIR, dir);
	}
	if (list)
		set_entry(pt.env_list, sizeof pt.env_list, PT_ENV_LIST, list);
}

/* Names whose values are never recorded, even when asked for. */
static int secret_name(const char *name, size_t len)
{
	static const char *const words[] = {
		"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL",
	};
	size_t i, j;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t w = strlen(words[i]);

		for (j = 0; j + w <= len; j++)
			if (!strncasecmp(name + j, words[i], w))
				return 1;
	}
	return 0;
}

int pt_env_recorded(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len, i;

	if (!eq)
		return 0;
	len = (size_t)(eq - entry);
	/* Membership first: the secret scan is the costly part, and every
	 * variable of every process passes through here. */
	for (i = 0; i < sizeof allowlist / sizeof allowlist[0]; i++)
		if (strlen(allowlist[i]) == len && !strncmp(entry, allowlist[i], len))
			return !secret_name(entry, len);
	if (pt.env_list[0]) {
		const char *list = pt.env_list + sizeof PT_ENV_LIST;
		const char *p = list;

		while (*p) {
			size_t k = strcspn(p, ":, ");

			if (k == len && !strncmp(p, entry, len))
				return !secret_name(entry, len);
			p += k;
			p += *p != '\0';
		}
	}
	return 0;
}

size_t pt_env_count(char *const *envp)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

char *const *pt_env_repair(char *const *envp, size_t n, char **out,
			   char *scratch, size_t scratch_len)
{
	static char *const empty[] = { NULL };
	const char *pre = NULL;
	size_t entry_len = strlen(pt.preload_entry), i, j = 0;
	int need_pre, need_sock, need_dir, need_list, have_sock = 0,
	    have_dir = 0, have_list = 0;

	if (!envp)
		envp = empty;
	for (i = 0; i < n; i++) {
		const char *e = envp[i];

		if (!strncmp(e, "LD_PRELOAD=", 11))
			pre = e;
		else if (!strncmp(e, PT_ENV_SOCKET "=", sizeof PT_ENV_SOCKET))
			have_sock = 1;
		else if (!strncmp(e, PT_ENV_DIR "=", sizeof PT_ENV_DIR))
			have_dir = 1;
		else if (!strncmp(e, PT_ENV_LIST "=", sizeof PT_ENV_LIST))
			have_list = 1;
	}
	need_pre = entry_len && (!pre || !list_has(pre + 11, pt.preload_entry,
						    entry_len));
	need_sock = pt.env_socket[0] && !have_sock;
	need_dir = pt.env_dir[0] && !have_dir;
	need_list = pt.env_list[0] && !have_list;
	if (!(need_pre || need_sock || need_dir || need_list) || n > PT_ENV_MAX)
		return envp;

	for (i = 0; i < n; i++) {
		size_t plen;

		out[j] = envp[i];
		if (envp[i] == pre && need_pre &&
		    (plen = strlen(pre)) + 1 + entry_len + 1 <= scratch_len) {
			/* Theirs first: a library they preload keeps its place. */
			memcpy(scratch, pre, plen);
			scratch[plen] = ':';
			memcpy(scratch + plen + 1, pt.preload_entry, entry_len + 1);
			out[j] = scratch;
		}
		j++;
	}
	if (need_pre && !pre)
		out[j++] = pt.env_preload;
	if (need_sock)
		out[j++] = pt.env_socket;
	if (need_dir)
		out[j++] = pt.env_dir;
	if (need_list)
		out[j++] = pt.env_list;
	out[j] = NULL;
	return out;
}
