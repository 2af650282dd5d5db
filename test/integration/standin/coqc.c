/*
 * Stands in for Rocq's coqc in the tests of known tools' trace files:
 * the Rocq of Debian 12 (Coq 8.16) is older than its -profile option.
 * Like `coqc -profile FILE X.v`, it writes FILE, a Chrome trace in the
 * object form with timestamps in microseconds since the epoch, and
 * exits 0: an event for the whole of X.v and, inside it, "Require"
 * (20 ms) and "Qed" (30 ms) with their detail in args.
 *
 * PROFILE_PAD_MB=N first writes events of 4 KiB each until the file is
 * about N MiB: the tests of the run's budget of trace files.
 *
 * PROFILE_STEPS=N adds N events "step I" that share Qed's time between
 * them, each ending where the next starts, as tools write a sequence.
 * Each lasts an odd number of quarters of a microsecond (exact in a
 * double at epoch magnitude), so the ends fall at every distance from the
 * reader's whole microseconds and every rounding of a double's 53 bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static long long now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

static void nap_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* q quarters of a microsecond, as a JSON number */
static void quarters(FILE *f, long long q)
{
	fprintf(f, "%lld.%02lld", q / 4, q % 4 * 25);
}

/* Step i of those of stepq quarters each from t1 (µs). */
static void step_event(FILE *f, int i, long long t1, long long stepq)
{
	fprintf(f, ",\n{\"name\":\"step %d\",\"cat\":\"rocq\",\"ph\":\"X\","
		"\"ts\":", i);
	quarters(f, t1 * 4 + i * stepq);
	fputs(",\"dur\":", f);
	quarters(f, stepq);
	fputs(",\"pid\":0,\"tid\":0,\"args\":{\"detail\":\"a step\"}}", f);
}

static void event(FILE *f, const char *name, const char *detail,
		  long long ts, long long dur, int *first)
{
	fprintf(f, "%s\n{\"name\":\"%s\",\"cat\":\"rocq\",\"ph\":\"X\","
		"\"ts\":%lld,\"dur\":%lld,\"pid\":0,\"tid\":0,"
		"\"args\":{\"detail\":\"%s\"}}", *first ? "" : ",", name, ts,
		dur, detail);
	*first = 0;
}

int main(int argc, char **argv)
{
	const char *profile = NULL, *src = NULL, *pad = getenv("PROFILE_PAD_MB");
	const char *steps = getenv("PROFILE_STEPS");
	long long t0 = now_us(), t1, t2, t3;
	int i, first = 1;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-profile") && i + 1 < argc)
			profile = argv[++i];
		else if (argv[i][0] != '-')
			src = argv[i];
	}
	if (!profile || !src) {
		fprintf(stderr, "usage: coqc -profile FILE X.v\n");
		return 2;
	}
	nap_ms(20);
	t1 = now_us();
	nap_ms(30);
	t2 = now_us();
	t3 = now_us();
	f = fopen(profile, "w");
	if (!f) {
		perror(profile);
		return 1;
	}
	fputs("{\"traceEvents\": [", f);
	if (pad) {
		long long want = atoll(pad) << 20;
		char *fill = malloc(4001);

		memset(fill, 'p', 4000);
		fill[4000] = '\0';
		while (ftell(f) + 8192 < want)
			event(f, "pad", fill, t0, 1, &first);
		free(fill);
	}
	event(f, src, "the file", t0, t3 - t0, &first);
	event(f, "Require", "Stdlib", t0, t1 - t0, &first);
	event(f, "Qed", "lemma one", t1, t2 - t1, &first);
	if (steps) {
		long long n = atoll(steps),
			  stepq = n > 0 ? ((t2 - t1) * 4 / n - 1) | 1 : 0;

		for (i = 0; i < n && stepq > 1; i++)
			step_event(f, i, t1, stepq);
	}
	fputs("\n]}\n", f);
	return fclose(f) ? 1 : 0;
}
