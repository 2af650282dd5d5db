/*
 * A stand-in for sudo: installed setuid root by test/integration/watch.py, it becomes
 * root through and through, then runs its arguments with /bin/sh -c.
 * ld.so has already dropped LD_PRELOAD from its environment, so nothing
 * it starts loads the library.
 */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: suid-exec SCRIPT\n");
		return 2;
	}
	if (setuid(geteuid()) < 0)
		perror("setuid");
	execl("/bin/sh", "sh", "-c", argv[1], (char *)NULL);
	perror("/bin/sh");
	return 127;
}
