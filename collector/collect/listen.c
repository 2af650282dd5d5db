/*
 * The listening socket: bound under a temporary name and linked into
 * place once listening, so that no client ever finds a name nobody
 * answers at; stale sockets of dead collectors are cleared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "collect/internal.h"
#include "base/util.h"

/* ---- listening ---- */

static int fill_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path) {
		pt_warn("socket path %s is too long (at most %zu bytes)", path,
			sizeof a->sun_path - 1);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

/*
 * Make path free for bind: nothing there, or a socket nobody listens on
 * (a collector that died), which is removed.  Returns 0 or -1.
 */
static int clear_stale(const char *path, const struct sockaddr_un *a)
{
	struct stat st;
	int fd, rc, err;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		pt_warn("cannot use %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		pt_warn("%s exists and is not a socket; not replacing it",
			path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		pt_warn("socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
	err = errno;
	close(fd);
	if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
		pt_warn("a collector is already listening at %s "
			"('proftrace stop' ends it)", path);
		return -1;
	}
	if (err != ECONNREFUSED) {
		pt_warn("cannot use %s: %s", path, strerror(err));
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		pt_warn("cannot remove the stale socket %s: %s", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Give the listening socket at tmp its public name path, without
 * replacing anything that appeared there meanwhile.  Returns 0 or -1.
 */
static int publish_socket(const char *tmp, const char *path)
{
	if (link(tmp, path) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno == EEXIST) {
		pt_warn("%s appeared while this collector was starting; "
			"not replacing it", path);
		return -1;
	}
	/* A file system without hard links: rename is as atomic, only it
	 * would replace a socket that appeared in the last microseconds. */
	if (rename(tmp, path) == 0)
		return 0;
	pt_warn("cannot listen at %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Listen at path.  The socket is bound and listening under a temporary
 * name first and then linked to path, so that the name never exists
 * without a listener behind it: a traced process would be refused
 * there, and a second collector would take the socket for a dead one's
 * and remove it.  (When path is too long for the temporary name, the
 * socket is bound in place and that window is back.)  Returns 0 or -1.
 */
int pt_server_open_listener(struct pt_server *s, const char *path)
{
	struct sockaddr_un a, ta;
	struct stat st;
	char tmp[sizeof ta.sun_path];
	const char *name = path;
	mode_t old;
	int fd, rc, n;

	if (fill_addr(&a, path) < 0 || clear_stale(path, &a) < 0)
		return -1;
	ta = a;
	n = snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	if (n > 0 && (size_t)n < sizeof tmp) {
		/* left by a collector that had our pid and was killed */
		if (lstat(tmp, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(tmp);
		memcpy(ta.sun_path, tmp, (size_t)n + 1);
		name = tmp;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		pt_warn("socket: %s", strerror(errno));
		return -1;
	}
	/* umask: the socket must never exist with looser permissions. */
	old = umask(0177);
	rc = bind(fd, (const struct sockaddr *)&ta, sizeof ta);
	umask(old);
	if (rc < 0) {
		pt_warn("cannot listen at %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (chmod(name, 0600) < 0 || stat(name, &st) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		pt_warn("cannot listen at %s: %s", path, strerror(errno));
		unlink(name);
		close(fd);
		return -1;
	}
	if (name != path && publish_socket(tmp, path) < 0) {
		unlink(tmp);
		close(fd);
		return -1;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	s->listen.kind = W_LISTEN;
	s->listen.fd = fd;
	return 0;
}

/* Every running process of a big build holds a connection. */
void pt_server_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
