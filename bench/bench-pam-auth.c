/* bench-pam-auth SECONDS VARIANT...
 *
 * Times password verification, one call of each variant per round
 * (interleaved, so a noisy neighbour slows every variant alike and the
 * ratios stay meaningful), until about SECONDS per variant have passed.
 * A VARIANT is one of
 *   crypt HASH PASSWORD          one crypt_rn(PASSWORD, HASH): bare libxcrypt
 *   pam SERVICE USER PASSWORD    pam_start(SERVICE, USER), pam_authenticate,
 *                                pam_end; the conversation answers PASSWORD
 * and prints one line per variant:
 *   "N KIND RESULT CALLS calls MEDIAN ms/call (min MIN, max MAX)"
 * RESULT is "match"/"nomatch" for crypt, PAM's return code for pam
 * ("success", "auth_err", "user_unknown", or "rc=N"); it must not change
 * from one call to the next.  bench/pam-auth.py runs this inside a sandbox
 * root whose /etc/pam.d holds the services it names.  The passwords are
 * the benchmark's own throwaway ones, so argv is good enough for them. */
#include <crypt.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_VARIANTS 8
#define MAX_ROUNDS 20000
#define MIN_ROUNDS 5

struct variant {
	const char *kind;
	const char *service, *user, *hash;   /* service+user (pam) or hash (crypt) */
	const char *password;
	int result;                         /* of the first call */
	double *ms;                         /* one timing per round */
};

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

/* Answer every echo-off prompt with the password; messages need no answer. */
static int conv(int num_msg, const struct pam_message **msg, struct pam_response **resp,
		void *appdata)
{
	const char *password = appdata;
	struct pam_response *r;

	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	r = calloc((size_t)num_msg, sizeof(*r));
	if (!r)
		return PAM_BUF_ERR;
	for (int i = 0; i < num_msg; i++) {
		if (msg[i]->msg_style != PAM_PROMPT_ECHO_OFF)
			continue;
		r[i].resp = strdup(password);
		if (!r[i].resp) {
			for (int j = 0; j < i; j++)
				free(r[j].resp);
			free(r);
			return PAM_BUF_ERR;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

static int run_pam(const struct variant *v)
{
	struct pam_conv c = { conv, (void *)v->password };
	pam_handle_t *pamh = NULL;
	int r;

	r = pam_start(v->service, v->user, &c, &pamh);
	if (r != PAM_SUCCESS) {
		fprintf(stderr, "bench-pam-auth: pam_start(%s, %s) failed: %d\n", v->service,
			v->user, r);
		exit(1);
	}
	r = pam_authenticate(pamh, 0);
	pam_end(pamh, r);
	return r;
}

static int run_crypt(const struct variant *v)
{
	/* a fresh crypt_data per call, as a one-shot verifier (the PAM
	 * module) has */
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	int match;

	if (!cd) {
		fputs("bench-pam-auth: out of memory\n", stderr);
		exit(1);
	}
	if (!crypt_rn(v->password, v->hash, cd, (int)sizeof(*cd))) {
		fprintf(stderr, "bench-pam-auth: crypt_rn(%s) failed\n", v->hash);
		exit(1);
	}
	match = strcmp(cd->output, v->hash) == 0;
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return match;
}

static int run_once(const struct variant *v)
{
	return strcmp(v->kind, "pam") == 0 ? run_pam(v) : run_crypt(v);
}

static void print_result(const struct variant *v, char *buf, size_t size)
{
	if (strcmp(v->kind, "crypt") == 0)
		snprintf(buf, size, "%s", v->result ? "match" : "nomatch");
	else if (v->result == PAM_SUCCESS)
		snprintf(buf, size, "success");
	else if (v->result == PAM_AUTH_ERR)
		snprintf(buf, size, "auth_err");
	else if (v->result == PAM_USER_UNKNOWN)
		snprintf(buf, size, "user_unknown");
	else
		snprintf(buf, size, "rc=%d", v->result);
}

int main(int argc, char **argv)
{
	struct variant vs[MAX_VARIANTS];
	size_t nv = 0, rounds = 0;
	double seconds, start;
	int i = 2;

	if (argc < 5) {
		fputs("usage: bench-pam-auth SECONDS {crypt HASH PASSWORD | "
		      "pam SERVICE USER PASSWORD}...\n", stderr);
		return 2;
	}
	seconds = strtod(argv[1], NULL);
	while (i < argc) {
		struct variant *v = &vs[nv];

		if (nv == MAX_VARIANTS) {
			fputs("bench-pam-auth: too many variants\n", stderr);
			return 2;
		}
		memset(v, 0, sizeof(*v));
		v->kind = argv[i];
		if (strcmp(argv[i], "crypt") == 0 && i + 2 < argc) {
			v->hash = argv[i + 1];
			v->password = argv[i + 2];
			i += 3;
		} else if (strcmp(argv[i], "pam") == 0 && i + 3 < argc) {
			v->service = argv[i + 1];
			v->user = argv[i + 2];
			v->password = argv[i + 3];
			i += 4;
		} else {
			fprintf(stderr, "bench-pam-auth: bad variant at \"%s\"\n", argv[i]);
			return 2;
		}
		v->ms = calloc(MAX_ROUNDS, sizeof(double));
		if (!v->ms) {
			fputs("bench-pam-auth: out of memory\n", stderr);
			return 1;
		}
		nv++;
	}

	/* one untimed call each: loads the modules, fills the caches, and
	 * fixes the answer every later call must give */
	for (size_t k = 0; k < nv; k++)
		vs[k].result = run_once(&vs[k]);

	start = now();
	while (rounds < MAX_ROUNDS &&
	       (rounds < MIN_ROUNDS || now() - start < seconds * (double)nv)) {
		for (size_t k = 0; k < nv; k++) {
			double t = now();
			int r = run_once(&vs[k]);

			vs[k].ms[rounds] = (now() - t) * 1e3;
			if (r != vs[k].result) {
				fprintf(stderr, "bench-pam-auth: variant %zu: answer changed "
					"from %d to %d\n", k + 1, vs[k].result, r);
				return 1;
			}
		}
		rounds++;
	}

	for (size_t k = 0; k < nv; k++) {
		char res[32];

		qsort(vs[k].ms, rounds, sizeof(double), cmp_double);
		print_result(&vs[k], res, sizeof(res));
		printf("%zu %s %s %zu calls %.3f ms/call (min %.3f, max %.3f)\n", k + 1,
		       vs[k].kind, res, rounds, vs[k].ms[rounds / 2], vs[k].ms[0],
		       vs[k].ms[rounds - 1]);
		free(vs[k].ms);
	}
	return 0;
}
