/* pamtest: run one PAM transaction through libpamtest (cwrap) and report.
 *
 *   pamtest SERVICE USER [-u UID:GID:EGID | -s UID:GID] [-c reap|ignore]
 *           [-i INPUT]... STEP=EXPECTED...
 *
 * -u: started as root, drop to real and effective uid UID, real gid GID,
 * effective gid EGID, no supplementary groups, after pam_wrapper has set
 * up (the setgid passwd's credentials: exec'ing a program that way would
 * be a secure execution, which ignores LD_PRELOAD).
 * -s: real uid UID with effective uid 0, gid GID (a setuid-root
 * application such as su, started by UID).
 * -c: the application reaps its children itself: a SIGCHLD handler that
 * waits for any pid ("reap"), or SIGCHLD ignored ("ignore").
 * INPUT answers the echo-off prompts in order.  STEP is auth, setcred,
 * acct, chauthtok, chauthtok-expired (PAM_CHANGE_EXPIRED_AUTHTOK), open or
 * close; EXPECTED is a PAM return code name (PAM_SUCCESS, PAM_AUTH_ERR,
 * ...).  Every PAM_ERROR_MSG and PAM_TEXT_INFO is printed as "error: ..."
 * and "info: ...", then "ok" or the first step whose result differed.
 * Exit 0 when every step returned what was expected, 1 when not, 2 on a
 * usage error.  Run with LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1
 * PAM_WRAPPER_SERVICE_DIR=DIR (tests/pam/test_pam_module.py does). */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <libpamtest.h>
#include <security/pam_appl.h>

#define MAX_STEPS 16
#define MAX_INPUTS 32
#define MAX_MSGS 32

static const struct {
	const char *name;
	int code;
} codes[] = {
#define C(x) { #x, x }
	C(PAM_SUCCESS), C(PAM_AUTH_ERR), C(PAM_USER_UNKNOWN), C(PAM_AUTHINFO_UNAVAIL),
	C(PAM_ACCT_EXPIRED), C(PAM_NEW_AUTHTOK_REQD), C(PAM_AUTHTOK_EXPIRED),
	C(PAM_AUTHTOK_ERR), C(PAM_AUTHTOK_RECOVERY_ERR), C(PAM_SERVICE_ERR),
	C(PAM_PERM_DENIED), C(PAM_CRED_INSUFFICIENT), C(PAM_MAXTRIES), C(PAM_ABORT),
	C(PAM_SYSTEM_ERR), C(PAM_BUF_ERR), C(PAM_CONV_ERR), C(PAM_TRY_AGAIN),
	C(PAM_SESSION_ERR), C(PAM_INCOMPLETE), C(PAM_IGNORE), C(PAM_AUTHTOK_LOCK_BUSY),
#undef C
};

static const char *code_name(int code)
{
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "PAM_(unknown)";
}

static void reap_all(int sig)
{
	int e = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = e;
}

static int parse_step(const char *arg, struct pam_testcase *tc)
{
	static const struct {
		const char *name;
		enum pamtest_ops op;
		int flags;
	} ops[] = {
		{ "auth", PAMTEST_AUTHENTICATE, 0 },
		{ "setcred", PAMTEST_SETCRED, PAM_ESTABLISH_CRED },
		{ "acct", PAMTEST_ACCOUNT, 0 },
		{ "chauthtok", PAMTEST_CHAUTHTOK, 0 },
		{ "chauthtok-expired", PAMTEST_CHAUTHTOK, PAM_CHANGE_EXPIRED_AUTHTOK },
		{ "open", PAMTEST_OPEN_SESSION, 0 },
		{ "close", PAMTEST_CLOSE_SESSION, 0 },
	};
	const char *eq = strchr(arg, '=');

	if (!eq)
		return -1;
	memset(tc, 0, sizeof *tc);
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		if (strlen(ops[i].name) != (size_t)(eq - arg) || strncmp(arg, ops[i].name, eq - arg))
			continue;
		for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
			if (strcmp(eq + 1, codes[c].name) == 0) {
				tc->pam_operation = ops[i].op;
				tc->expected_rv = codes[c].code;
				tc->flags = ops[i].flags;
				return 0;
			}
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct pam_testcase steps[MAX_STEPS];
	const char *inputs[MAX_INPUTS + 1] = { NULL };
	char *err[MAX_MSGS + 1] = { NULL }, *info[MAX_MSGS + 1] = { NULL };
	size_t nsteps = 0, ninputs = 0;
	struct pamtest_conv_data conv;
	enum pamtest_err perr;
	unsigned uid, gid, egid;
	bool become = false, setuid_root = false;
	struct sigaction sa = { .sa_handler = SIG_DFL };
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: pamtest SERVICE USER [-i INPUT]... STEP=EXPECTED...\n");
		return 2;
	}
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-i") == 0 && i + 1 < argc && ninputs < MAX_INPUTS) {
			inputs[ninputs++] = argv[++i];
		} else if (strcmp(argv[i], "-u") == 0 && i + 1 < argc &&
		           sscanf(argv[++i], "%u:%u:%u", &uid, &gid, &egid) == 3) {
			become = true;
		} else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc &&
		           sscanf(argv[++i], "%u:%u", &uid, &gid) == 2) {
			setuid_root = true;
		} else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc &&
		           (strcmp(argv[i + 1], "reap") == 0 || strcmp(argv[i + 1], "ignore") == 0)) {
			if (strcmp(argv[++i], "reap") == 0) {
				sa.sa_handler = reap_all;
				sa.sa_flags = SA_RESTART;
			} else {
				sa.sa_handler = SIG_IGN;
			}
		} else if (nsteps < MAX_STEPS && parse_step(argv[i], &steps[nsteps]) == 0) {
			nsteps++;
		} else {
			fprintf(stderr, "pamtest: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (nsteps == 0) {
		fprintf(stderr, "pamtest: no step\n");
		return 2;
	}
	for (i = 0; i < MAX_MSGS; i++) {
		err[i] = calloc(1, PAM_MAX_MSG_SIZE + 1);
		info[i] = calloc(1, PAM_MAX_MSG_SIZE + 1);
		if (!err[i] || !info[i])
			return 2;
	}
	if (become && (setgroups(0, NULL) < 0 || setresgid(gid, egid, egid) < 0 ||
	               setresuid(uid, uid, uid) < 0)) {
		perror("pamtest: cannot change credentials");
		return 2;
	}
	if (setuid_root && (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	                    setresuid(uid, 0, 0) < 0)) {
		perror("pamtest: cannot change credentials");
		return 2;
	}
	if (sigaction(SIGCHLD, &sa, NULL) < 0) {
		perror("pamtest: cannot set SIGCHLD");
		return 2;
	}
	memset(&conv, 0, sizeof conv);
	conv.in_echo_off = inputs;
	conv.in_echo_on = inputs;
	conv.out_err = err;
	conv.out_info = info;

	perr = _pamtest(argv[1], argv[2], &conv, steps, nsteps, NULL);

	for (i = 0; i < MAX_MSGS && err[i][0]; i++)
		printf("error: %s\n", err[i]);
	for (i = 0; i < MAX_MSGS && info[i][0]; i++)
		printf("info: %s\n", info[i]);
	if (perr == PAMTEST_ERR_OK) {
		printf("ok\n");
		return 0;
	}
	if (perr == PAMTEST_ERR_CASE) {
		const struct pam_testcase *f = _pamtest_failed_case(steps, nsteps);
		printf("FAIL: step %d expected %s got %s\n", (int)(f - steps),
		       code_name(f->expected_rv), code_name(f->op_rv));
	} else {
		printf("FAIL: %s\n", pamtest_strerror(perr));
	}
	return 1;
}
