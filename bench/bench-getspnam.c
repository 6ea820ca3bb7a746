/* bench-getspnam NAME [SECONDS]
 *
 * Calls getspnam(NAME) in a loop for about SECONDS (default 0.5) through
 * whatever nsswitch.conf says, and prints
 *   "NAME found|missing CALLS calls US us/call".
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

int main(int argc, char **argv)
{
	double seconds = 0.5, start, elapsed;
	long calls = 0, batch = 16, i;
	int found;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench-getspnam NAME [SECONDS]\n");
		return 2;
	}
	if (argc == 3)
		seconds = strtod(argv[2], NULL);

	/* The first call loads the NSS module and reads nsswitch.conf;
	 * keep it out of the measurement. */
	found = getspnam(argv[1]) != NULL;

	start = now();
	do {
		for (i = 0; i < batch; i++) {
			if ((getspnam(argv[1]) != NULL) != found) {
				fprintf(stderr, "bench-getspnam: %s: answer changed\n", argv[1]);
				return 1;
			}
		}
		calls += batch;
		if (batch < 4096)
			batch *= 2;
		elapsed = now() - start;
	} while (elapsed < seconds);

	printf("%s %s %ld calls %.3f us/call\n", argv[1], found ? "found" : "missing", calls,
	       elapsed * 1e6 / calls);
	return 0;
}
