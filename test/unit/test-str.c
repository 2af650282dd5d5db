/*
 * The library's own string functions and direct system calls (pt-str.h,
 * pt-sys.h) against libc's, which they replace: same results on every
 * pair of a set of awkward strings, and getcwd's three outcomes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt-str.h"
#include "pt-sys.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	printf("test-str.c:%d: FAIL: ", __LINE__); printf(__VA_ARGS__); \
	putchar('\n'); } } while (0)

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

int main(void)
{
	static const char *const s[] = {
		"", "a", "A", "ab", "aB", "abc", "LD_PRELOAD=/x/libproftrace.so",
		"LD_PRELOAD=", "ld_preload=", "PROFTRACE_SOCKET=/tmp/s",
		"x:y z", "/usr/lib/libproftrace.so:/b.so", "\xe9t\xe9", "\xe9T",
		"\x7f", "\x80", "a/b/c", "TOKEN", "my_token_x", ": ", ":, ",
		"a.so b.so,c.so:\xe9",
	};
	const size_t n = sizeof s / sizeof *s;
	char buf[PATH_MAX], want[PATH_MAX], dir[] = "/tmp/pt-test-str-XXXXXX";
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		const char *p;

		CHECK(pt_strlen(s[i]) == strlen(s[i]), "strlen %zu", i);
		for (k = 0; k < 256; k += k < 130 ? 1 : 125) {
			CHECK(pt_strchr(s[i], (int)k) == strchr(s[i], (int)k),
			      "strchr %zu %zu", i, k);
			CHECK(pt_memrchr(s[i], (int)k, strlen(s[i])) ==
			      memrchr(s[i], (int)k, strlen(s[i])),
			      "memrchr %zu %zu", i, k);
		}
		p = pt_strcpy(buf, s[i]);
		CHECK(p == buf && !strcmp(buf, s[i]), "strcpy %zu", i);
		for (j = 0; j < n; j++) {
			CHECK(pt_strcspn(s[i], s[j]) == strcspn(s[i], s[j]),
			      "strcspn %zu %zu", i, j);
			for (k = 0; k <= strlen(s[i]) + 1; k++) {
				CHECK(sign(pt_strncmp(s[i], s[j], k)) ==
				      sign(strncmp(s[i], s[j], k)),
				      "strncmp %zu %zu %zu", i, j, k);
				CHECK(sign(pt_strncasecmp(s[i], s[j], k)) ==
				      sign(strncasecmp(s[i], s[j], k)),
				      "strncasecmp %zu %zu %zu", i, j, k);
			}
		}
	}
	memset(buf, 'x', sizeof buf);
	CHECK(pt_memcpy(buf, "abc", 0) == buf && buf[0] == 'x', "memcpy 0");
	pt_memcpy(buf + 1, s[6], strlen(s[6]) + 1);
	CHECK(buf[0] == 'x' && !strcmp(buf + 1, s[6]), "memcpy");

	/* getcwd: the directory; ERANGE when it does not fit; ENOENT once
	 * it is gone. */
	if (!mkdtemp(dir) || chdir(dir) < 0) {
		perror(dir);
		return 2;
	}
	CHECK(pt_sys_getcwd(buf, sizeof buf) == buf && getcwd(want, sizeof want)
	      && !strcmp(buf, want), "getcwd %s", buf);
	errno = 0;
	CHECK(!pt_sys_getcwd(buf, strlen(dir)) && errno == ERANGE,
	      "getcwd, small buffer: errno %d", errno);
	CHECK(pt_sys_getcwd(buf, strlen(dir) + 1) == buf, "getcwd, exact fit");
	rmdir(dir);
	errno = 0;
	CHECK(!pt_sys_getcwd(buf, sizeof buf) && errno == ENOENT,
	      "getcwd, removed: errno %d", errno);
	/* and a failed call through the inline trap sets errno */
	errno = 0;
	CHECK(pt_sys_close(-1) == -1 && errno == EBADF, "close(-1): errno %d",
	      errno);
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
