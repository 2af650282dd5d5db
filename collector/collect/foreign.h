/*
 * Programs of the other ELF class: 32-bit programs on a 64-bit machine.
 * ld.so in one of them prints "wrong ELF class" when LD_PRELOAD names the
 * 64-bit library by its path, and "cannot be preloaded" when $LIB
 * expands, for it, to a directory without a 32-bit build: the program's
 * stderr would change (design.md, pitfall 7).  The library leaves itself
 * out of the environment of such an exec (preload/envexec.c); `record` does
 * the same for its command with these.
 */
#ifndef PT_FOREIGN_H
#define PT_FOREIGN_H

/*
 * Would ld.so in the program `file` (searched in PATH as execvp does when
 * it has no '/') fail to load the library that LD_PRELOAD's item `entry`
 * names — a program of the other class (or a `#!` script run by one) for
 * which entry expands to no readable file?  0 when it would load it, when
 * file is of this process's class, or when that cannot be told.
 */
int pt_foreign_unloadable(const char *file, const char *entry);

#endif
