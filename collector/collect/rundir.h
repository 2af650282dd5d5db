/*
 * Where the collector's socket and the preload library live at run time.
 *
 * Everything a traced process must reach goes under /tmp (or is installed
 * under /usr): build sandboxes such as opam's bubblewrap show those and hide
 * /root, /run, $XDG_RUNTIME_DIR and the build tree (doc: design.md).  The
 * per-user directory PT_RUNDIR_PREFIX<uid> is private (0700) because anyone
 * who can connect to the socket can write into the capture.
 *
 * Every function returning a path returns a malloc'd string.
 */
#ifndef PT_RUNDIR_H
#define PT_RUNDIR_H

/*
 * The per-user directory /tmp/proftrace-<uid>, created 0700 if missing.
 * Returns NULL with a one-line error if it exists but is not a directory
 * owned by us with no group or other permissions (someone else's, or a
 * symbolic link), or cannot be created.
 */
char *pt_rundir_user(void);

/*
 * The default socket path, /tmp/proftrace-<uid>/socket.  With `create`,
 * the directory is made and checked as by pt_rundir_user() (NULL on error);
 * without, only the path is computed (for clients).
 */
char *pt_rundir_socket(int create);

/*
 * A new private directory for one `proftrace record` run, under the
 * per-user directory.  Returns NULL with a one-line error.
 */
char *pt_rundir_make_run(void);

/*
 * Remove a directory made by pt_rundir_make_run() and the plain files in
 * it.  Problems are reported, not fatal.
 */
void pt_rundir_remove(const char *dir);

/*
 * The preload library, as an absolute path: $PROFTRACE_LIB if set, else
 * the build tree's preload/libproftrace.so when this program runs from that
 * build tree, else the installed one.  Returns NULL with a one-line error
 * if the chosen file cannot be read.
 */
char *pt_rundir_find_lib(void);

/*
 * The path a traced process should preload: lib itself if it is installed
 * under /usr/, else a copy of it in PT_RUNDIR_PREFIX "lib-<uid>/", named
 * by its contents (libproftrace-<hash>.so, mode 0644, in a directory of
 * ours, 0755).  Every user and every sandbox that shows /tmp can read it
 * (a command may run as another user), and it is never removed, so a
 * process the command leaves behind still finds it.  A copy already
 * there is used only if it is a regular file of ours that nobody else can
 * write and holds exactly lib's bytes; otherwise a new one replaces it
 * atomically.  Returns NULL with a one-line error, also when the
 * directory is not ours or is writable by others.
 */
char *pt_rundir_visible_lib(const char *lib);

/*
 * path made absolute against the current directory, for a command that
 * leaves it (a detached daemon).  Exits with a one-line error if the
 * current directory is gone.
 */
char *pt_rundir_absolute(const char *path);

/*
 * The LD_PRELOAD value for a traced child: `old` (may be NULL) without any
 * libproftrace entry, then lib.  An inherited copy of the library (a nested
 * record, a shell that exported it) must not be loaded twice.
 */
char *pt_rundir_preload_value(const char *old, const char *lib);

/*
 * The same with the file-access library `files` (`--files`) before lib,
 * so that its hooks come first and forward to the library's.
 */
char *pt_rundir_preload_files(const char *old, const char *files,
			      const char *lib);

/*
 * libptfiles.so, beside lib (pt_rundir_find_lib()'s), as an absolute
 * path; NULL with a one-line error if it cannot be read.
 */
char *pt_rundir_files_lib(const char *lib);

#endif
