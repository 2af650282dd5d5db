/* Programs of the other ELF class; see foreign.h. */
#include "collect/foreign.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"

#if defined(__x86_64__)
#define FOREIGN_LOADER "/lib/ld-linux.so.2"
#elif defined(__i386__)
#define FOREIGN_LOADER "/lib64/ld-linux-x86-64.so.2"
#endif

#define NATIVE_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

/* 1: an ELF file of the other class (or a script run by one); 0: not;
 * -1: path cannot be opened. */
static int foreign_file(const char *path, int depth)
{
	unsigned char buf[256];
	char interp[256];
	ssize_t got, i = 2;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	got = pread(fd, buf, sizeof buf, 0);
	close(fd);
	if (got > EI_CLASS && !memcmp(buf, ELFMAG, SELFMAG))
		return buf[EI_CLASS] != NATIVE_CLASS;
	if (depth || got <= 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	while (i < got && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	while (i < got && buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' &&
	       n + 1 < sizeof interp)
		interp[n++] = (char)buf[i++];
	interp[n] = '\0';
	return n && i < got && foreign_file(interp, 1) > 0;
}

/* foreign_file() of what execvp would run for file. */
static int foreign_target(const char *file)
{
	const char *path = getenv("PATH"), *p;
	struct pt_sb full = PT_SB_INIT;
	int r = 0;

	if (strchr(file, '/'))
		return foreign_file(file, 0) > 0;
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		size_t dlen = strcspn(p, ":");

		pt_sb_reset(&full);
		pt_sb_addf(&full, "%.*s%s%s", (int)dlen, p, dlen ? "/" : "",
			   file);
		if ((r = foreign_file(full.buf, 0)) >= 0)
			break;
		p += dlen;
		if (!*p)
			break;
	}
	pt_sb_release(&full);
	return r > 0;
}

#ifdef FOREIGN_LOADER
/* What the other class's ld.so expands $LIB to: the directory it lives
 * in, less "/" or "/usr/" ("lib32", "lib/i386-linux-gnu").  NULL if the
 * machine has no such loader. */
static char *foreign_dollar_lib(void)
{
	char *real = realpath(FOREIGN_LOADER, NULL), *slash, *lib;

	if (!real)
		return NULL;
	slash = strrchr(real, '/');
	*slash = '\0';
	lib = real + (!strncmp(real, "/usr/", 5) ? 5 : 1);
	lib = *lib ? strdup(lib) : NULL;
	free(real);
	return lib;
}
#endif

int pt_foreign_unloadable(const char *file, const char *entry)
{
#ifdef FOREIGN_LOADER
	struct pt_sb path = PT_SB_INIT;
	const char *d;
	char *flib;
	int loads = 0;

	if (!file || !*file || !foreign_target(file))
		return 0;
	if (!(flib = foreign_dollar_lib()))
		return 0;       /* no loader: only a static one runs */
	/* As the library decides it (preload/env.c, note_foreign), for
	 * what record puts there: $LIB, or a path naming one build. */
	if ((d = strstr(entry, "$LIB")) || (d = strstr(entry, "${LIB}"))) {
		pt_sb_add(&path, entry, (size_t)(d - entry));
		pt_sb_addstr(&path, flib);
		pt_sb_addstr(&path, d + (d[1] == '{' ? 6 : 4));
		loads = access(path.buf, R_OK) == 0;
	}
	pt_sb_release(&path);
	free(flib);
	return !loads;
#else
	(void)file;
	(void)entry;
	return 0;
#endif
}
