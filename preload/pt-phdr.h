/*
 * dl_iterate_phdr's list without the calling library's own entry, for
 * libproftrace.so (phdr.c) and libptfiles.so alike: ASan's runtime must
 * come first after the program (doc/design.md, pitfall 12).  Each
 * library that includes this compares with its own ELF header.
 */
#ifndef PT_PHDR_H
#define PT_PHDR_H

#include <elf.h>
#include <link.h>

/* The linker defines it at the including library's ELF header: where its
 * program headers are mapped tells its entry apart. */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

struct pt_phdr_call {
	int (*fn)(struct dl_phdr_info *, size_t, void *);
	void *data;
};

static int pt_phdr_skip_self(struct dl_phdr_info *info, size_t size, void *p)
{
	const struct pt_phdr_call *c = p;
	const void *own = (const char *)&__ehdr_start + __ehdr_start.e_phoff;

	if ((const void *)info->dlpi_phdr == own)
		return 0;
	return c->fn(info, size, c->data);
}

/* real (the next dl_iterate_phdr) over every object but ours. */
static inline int pt_phdr_iterate_others(
	int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *),
	int (*fn)(struct dl_phdr_info *, size_t, void *), void *data)
{
	struct pt_phdr_call c = { fn, data };

	return real(pt_phdr_skip_self, &c);
}

#endif
