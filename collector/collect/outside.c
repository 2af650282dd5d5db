/* What the /proc watcher and the tracer share; see outside.h. */
#include "collect/outside.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/frame.h"

void pt_outside_init(struct pt_outside *o,
		     void (*put)(void *arg, const void *frame, size_t len),
		     void *arg)
{
	o->put = put;
	o->arg = arg;
	pt_sb_init(&o->frame);
	pt_sb_init(&o->buf);
}

void pt_outside_free(struct pt_outside *o)
{
	pt_sb_release(&o->frame);
	pt_sb_release(&o->buf);
}

void pt_outside_begin(struct pt_outside *o, uint8_t type, pid_t pid,
		      uint64_t time_ns, const void *fixed, size_t n)
{
	pt_frame_build_begin(&o->frame, type, (uint32_t)pid, time_ns, fixed, n);
}

void pt_outside_item(struct pt_outside *o, enum pt_tag tag, const char *s,
		     size_t n)
{
	pt_frame_build_item(&o->frame, tag, s, n);
}

void pt_outside_end(struct pt_outside *o)
{
	pt_frame_build_end(&o->frame);
	if (o->put)
		o->put(o->arg, o->frame.buf, o->frame.len);
}

void pt_outside_reap(struct pt_outside *o, pid_t parent, pid_t child,
		     int status, int have_rusage, uint64_t ut_us,
		     uint64_t st_us, uint64_t rss_kb, uint32_t flags,
		     uint64_t time_ns)
{
	struct pt_rec_reap r = {
		.child_pid = htole32((uint32_t)child),
		.wait_status = (int32_t)htole32((uint32_t)status),
		.have_rusage = htole32((uint32_t)have_rusage),
		.flags = htole32(flags),
		.utime_us = htole64(ut_us),
		.stime_us = htole64(st_us),
		.maxrss_kb = htole64(rss_kb),
	};

	pt_outside_begin(o, PT_REC_REAP, parent, time_ns, &r, sizeof r);
	pt_outside_end(o);
}


int pt_outside_elf_go(int fd, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sh = NULL, strh;
	char *names = NULL;
	size_t i;
	int go = 0;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum ||
	    eh->e_shnum > 4096 || eh->e_shstrndx >= eh->e_shnum)
		return 0;
	sh = pt_xmalloc(eh->e_shnum * sizeof *sh);
	if (pread(fd, sh, eh->e_shnum * sizeof *sh, (off_t)eh->e_shoff) !=
	    (ssize_t)(eh->e_shnum * sizeof *sh))
		goto out;
	strh = sh[eh->e_shstrndx];
	if (strh.sh_size > (1u << 20))
		goto out;
	names = pt_xmalloc(strh.sh_size + 1);
	if (pread(fd, names, strh.sh_size, (off_t)strh.sh_offset) !=
	    (ssize_t)strh.sh_size)
		goto out;
	names[strh.sh_size] = 0;
	for (i = 0; i < eh->e_shnum && !go; i++)
		if (sh[i].sh_name < strh.sh_size)
			go = !strcmp(names + sh[i].sh_name,
				     ".note.go.buildid") ||
			     !strcmp(names + sh[i].sh_name, ".go.buildinfo");
out:
	free(names);
	free(sh);
	return go;
}
