/* bench-getspnam NAME [SECONDS]
 *
 * Calls getspnam(NAME) in a loop for about SECONDS (default 0.5) through
 * whatever nsswitch.conf says, and prints
 *   "NAME found|missing CALLS calls US us/call (median of N batches; min US)".
 * bench/lookup.py runs it inside a sandbox root with "shadow: files" and
 * "shadow: hardened_shadow" and compares. */
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define MAX_BATCHES 4096

int main(int argc, char **argv)
{
	static double per_call[MAX_BATCHES];
	double seconds = 0.5, start, t, one;
	long batch, i, calls = 0;
	size_t n = 0;
	int found;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench-getspnam NAME [SECONDS]\n");
		return 2;
	}
	if (argc == 3)
		seconds = strtod(argv[2], NULL);

	/* The first call loads the NSS module and reads nsswitch.conf;
	 * keep it out of the measurement, but use the second to size the
	 * batches (about 10 ms each). */
	found = getspnam(argv[1]) != NULL;
	t = now();
	(void)getspnam(argv[1]);
	one = now() - t;
	batch = one > 0 ? (long)(0.01 / one) : 1000;
	if (batch < 1)
		batch = 1;

	/* A virtual machine's neighbours make single timings noisy: time
	 * many short batches and report the median per-call time of the
	 * batches (the minimum too, for the curious). */
	start = now();
	do {
		t = now();
		for (i = 0; i < batch; i++) {
			if ((getspnam(argv[1]) != NULL) != found) {
				fprintf(stderr, "bench-getspnam: %s: answer changed\n", argv[1]);
				return 1;
			}
		}
		per_call[n++] = (now() - t) / batch;
		calls += batch;
	} while (now() - start < seconds && n < MAX_BATCHES);

	qsort(per_call, n, sizeof per_call[0], cmp_double);
	printf("%s %s %ld calls %.3f us/call (median of %zu batches; min %.3f)\n", argv[1],
	       found ? "found" : "missing", calls, per_call[n / 2] * 1e6, n, per_call[0] * 1e6);
	return 0;
}
