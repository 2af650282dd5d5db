/*
 * probe-exec-variants: every public exec function, each in its own forked
 * child: execve, execv, execvp, execvpe, execl, execlp, execle, fexecve,
 * execveat (dirfd + relative name, AT_EMPTY_PATH on an fd, AT_FDCWD +
 * absolute path).
 *
 * Each child execs /bin/sh -c 'exit N' with N distinct per variant (11..21);
 * the variants that pass an environment also make the shell check a
 * variable from it, and the ones that inherit `environ` check a variable
 * set with setenv(), so a lost or mangled environment shows up as exit 1.
 * The parent checks every status with waitpid.
 *
 * Processes: 12 fork children, each execs once (/bin/sh, or /bin/true for
 * the last one).  Expected exit status: 0.
 */
#define PROBE_NAME "exec-variants"
#include "probe.h"

#define SH "/bin/sh"

static char *env_for(const char *variant, char *buf, size_t cap)
{
	snprintf(buf, cap, "PROBE_VAR=%s", variant);
	return buf;
}

/* Runs in the child: exec according to variant; returns only on failure. */
static void do_exec(int code)
{
	char var[64], script[160];
	char *envp[] = { var, "PATH=/usr/bin:/bin", NULL };
	int fd;

	switch (code) {
	case 11:        /* execve: its own environment */
		env_for("execve", var, sizeof var);
		execve(SH, (char *[]){ "sh", "-c",
			"test \"$PROBE_VAR\" = execve && exit 11", NULL }, envp);
		child_fail("execve", errno, 127);
	case 12:        /* execv: environ */
		execv(SH, (char *[]){ "sh", "-c",
			"test \"$PROBE_INHERIT\" = yes && exit 12", NULL });
		child_fail("execv", errno, 127);
	case 13:        /* execvp: PATH search, environ */
		execvp("sh", (char *[]){ "sh", "-c",
			"test \"$PROBE_INHERIT\" = yes && exit 13", NULL });
		child_fail("execvp", errno, 127);
	case 14:        /* execvpe: PATH search, its own environment */
		env_for("execvpe", var, sizeof var);
		execvpe("sh", (char *[]){ "sh", "-c",
			"test \"$PROBE_VAR\" = execvpe && exit 14", NULL }, envp);
		child_fail("execvpe", errno, 127);
	case 15:        /* execl */
		execl(SH, "sh", "-c", "test \"$PROBE_INHERIT\" = yes && exit 15",
		      (char *)NULL);
		child_fail("execl", errno, 127);
	case 16:        /* execlp */
		execlp("sh", "sh", "-c", "test \"$PROBE_INHERIT\" = yes && exit 16",
		       (char *)NULL);
		child_fail("execlp", errno, 127);
	case 17:        /* execle: its own environment after the NULL */
		env_for("execle", var, sizeof var);
		execle(SH, "sh", "-c", "test \"$PROBE_VAR\" = execle && exit 17",
		       (char *)NULL, envp);
		child_fail("execle", errno, 127);
	case 18:        /* fexecve on an O_RDONLY|O_CLOEXEC fd of the binary */
		fd = open(SH, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			child_fail("open " SH, errno, 126);
		env_for("fexecve", var, sizeof var);
		fexecve(fd, (char *[]){ "sh", "-c",
			"test \"$PROBE_VAR\" = fexecve && exit 18", NULL }, envp);
		child_fail("fexecve", errno, 127);
	case 19:        /* execveat: directory fd and a name under it */
		fd = open("/bin", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			child_fail("open /bin", errno, 126);
		env_for("execveat", var, sizeof var);
		execveat(fd, "sh", (char *[]){ "sh", "-c",
			"test \"$PROBE_VAR\" = execveat && exit 19", NULL }, envp, 0);
		child_fail("execveat", errno, 127);
	case 20:        /* execveat: AT_EMPTY_PATH on an O_PATH fd of the binary */
		fd = open(SH, O_PATH | O_CLOEXEC);
		if (fd < 0)
			child_fail("open " SH, errno, 126);
		execveat(fd, "", (char *[]){ "sh", "-c",
			"test \"$PROBE_INHERIT\" = yes && exit 20", NULL }, environ,
			AT_EMPTY_PATH);
		child_fail("execveat AT_EMPTY_PATH", errno, 127);
	case 21:        /* execveat: AT_FDCWD and an absolute path */
		snprintf(script, sizeof script,
			 "test \"$PROBE_INHERIT\" = yes && exit %d", code);
		execveat(AT_FDCWD, SH, (char *[]){ "sh", "-c", script, NULL },
			 environ, 0);
		child_fail("execveat AT_FDCWD", errno, 127);
	case 0:         /* execl with nothing but argv[0] */
		execl("/bin/true", "true", (char *)NULL);
		child_fail("execl /bin/true", errno, 127);
	}
	child_fail("unknown variant", EINVAL, 125);
}

int main(void)
{
	static const struct { int code; const char *name; } v[] = {
		{ 11, "execve" }, { 12, "execv" }, { 13, "execvp" },
		{ 14, "execvpe" }, { 15, "execl" }, { 16, "execlp" },
		{ 17, "execle" }, { 18, "fexecve" }, { 19, "execveat dirfd" },
		{ 20, "execveat AT_EMPTY_PATH" }, { 21, "execveat AT_FDCWD" },
		{ 0, "execl argv0 only" },
	};
	size_t i;

	if (setenv("PROBE_INHERIT", "yes", 1) < 0 ||
	    setenv("PATH", "/usr/bin:/bin", 1) < 0)
		fail("setenv: %s", strerror(errno));
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		pid_t pid = xfork(v[i].name);

		if (pid == 0)
			do_exec(v[i].code);
		reap_expect(pid, v[i].code, v[i].name);
	}
	return probe_ok();
}
