/*
 * env-exec: with arguments, execve(argv[1], argv + 1, {NULL}), a program
 * started with an empty environment; without, print environ, each entry
 * followed by a NUL (what `env -0` prints), as the program sees it.
 */
#include <stdio.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char **e;

	if (argc > 1) {
		execve(argv[1], argv + 1, (char *[]){ NULL });
		perror("env-exec: execve");
		return 127;
	}
	for (e = environ; *e; e++) {
		fputs(*e, stdout);
		putchar('\0');
	}
	return 0;
}
