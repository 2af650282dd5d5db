/*
 * Stands in for dune 3 in the tests of known tools' trace files: Debian
 * 12 ships dune 2.9, whose --trace-file events name no pid.  Like `dune
 * build --trace-file FILE`, it runs processes and writes FILE with an
 * event for each in dune 3's form (cat "process", args.pid the process's
 * pid, args.process_args its arguments, timestamps in microseconds since
 * the epoch; the form of dune's own test trace-file.t).
 *
 * It runs `sh -c 'sleep 0.1'` twice at once: the same program with the
 * same arguments, so only the pid tells their events apart.
 */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

extern char **environ;

static long long now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

int main(int argc, char **argv)
{
	char *child[] = { "sh", "-c", "sleep 0.1", NULL };
	const char *file = NULL;
	long long start[2], end[2];
	pid_t pid[2];
	int i, status;
	FILE *f;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--trace-file") && i + 1 < argc)
			file = argv[++i];
	if (!file) {
		fprintf(stderr, "usage: dune build --trace-file FILE\n");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		start[i] = now_us();
		if (posix_spawn(&pid[i], "/bin/sh", NULL, NULL, child, environ)) {
			perror("posix_spawn");
			return 1;
		}
	}
	for (i = 0; i < 2; i++) {
		if (waitpid(pid[i], &status, 0) != pid[i]) {
			perror("waitpid");
			return 1;
		}
		end[i] = now_us();
	}
	f = fopen(file, "w");
	if (!f) {
		perror(file);
		return 1;
	}
	fputs("[", f);
	for (i = 0; i < 2; i++)
		fprintf(f, "%s{\"args\":{\"process_args\":[\"-c\",\"sleep 0.1\"],"
			"\"pid\":%d,\"prog\":\"/bin/sh\",\"dir\":\".\","
			"\"exit\":0},\"ph\":\"X\",\"dur\":%lld,\"name\":\"sh\","
			"\"cat\":\"process\",\"ts\":%lld,\"pid\":0,\"tid\":0}\n",
			i ? "," : "", (int)pid[i], end[i] - start[i], start[i]);
	fputs("]\n", f);
	return fclose(f) ? 1 : 0;
}
