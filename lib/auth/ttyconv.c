/* The terminal conversation: see ttyconv.h for why it is ours. */
#include "ttyconv.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "pamconv.h"
#include "util.h"

/* The asynchronous signals whose default action ends the process.  The
 * synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) are
 * faults of our own, not a way out a user picks at a prompt. */
static const int ending_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGPIPE,
	SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT,
};
#define N_ENDING (sizeof(ending_signals) / sizeof(ending_signals[0]))
/* ... and the real-time signals, SIGRTMIN to SIGRTMAX (at most 64 of
 * them; SIGRTMIN is a function call in glibc, hence the fixed bound) */
#define MAX_CAUGHT (N_ENDING + 64)

static volatile sig_atomic_t caught_signal;
static volatile sig_atomic_t continued;

static void note_signal(int sig)
{
	caught_signal = sig;
}

static void note_continued(int sig)
{
	(void)sig;
	continued = 1;
}

/* What a prompt changed, to be put back on every way out. */
struct prompt_state {
	int fd;
	bool termios_saved;
	struct termios saved_termios;
	struct termios quiet_termios;   /* echo off, what a hidden prompt reads under */
	const char *prompt;
	bool cont_caught;
	struct sigaction saved_cont;
	sigset_t saved_mask;       /* the program's mask */
	sigset_t wait_mask;        /* the mask while waiting: ours unblocked */
	bool caught[MAX_CAUGHT];
	struct sigaction saved_action[MAX_CAUGHT];
};

static int signal_at(size_t i)
{
	return i < N_ENDING ? ending_signals[i] : SIGRTMIN + (int)(i - N_ENDING);
}

static size_t n_signals(void)
{
	size_t n = N_ENDING + (size_t)(SIGRTMAX - SIGRTMIN) + 1;

	return n < MAX_CAUGHT ? n : MAX_CAUGHT;
}

void hs_ttyconv_ending_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < n_signals(); i++)
		sigaddset(set, signal_at(i));
}

/* Catch every ending signal the program neither ignores nor blocks.  All
 * of them stay blocked outside the wait (ppoll unblocks them atomically),
 * so none can slip in between a check and a read. */
static void catch_signals(struct prompt_state *st)
{
	struct sigaction sa = { .sa_handler = note_signal };
	sigset_t ours;

	sigfillset(&sa.sa_mask);
	/* no SA_RESTART: the wait must return */
	sigemptyset(&ours);
	caught_signal = 0;
	sigprocmask(SIG_SETMASK, NULL, &st->saved_mask);
	st->wait_mask = st->saved_mask;
	for (size_t i = 0; i < n_signals(); i++) {
		int sig = signal_at(i);

		st->caught[i] = false;
		if (sigismember(&st->saved_mask, sig) == 1)
			continue;
		if (sigaction(sig, NULL, &st->saved_action[i]) < 0 ||
		    st->saved_action[i].sa_handler == SIG_IGN)
			continue;
		sigaddset(&ours, sig);
		st->caught[i] = true;
	}
	/* SIGCONT too, which ends nothing: after ^Z and fg the job's shell
	 * has put its own terminal settings back, echo on (hidden_again) */
	continued = 0;
	st->cont_caught = sigismember(&st->saved_mask, SIGCONT) != 1 &&
			  sigaction(SIGCONT, NULL, &st->saved_cont) == 0;
	if (st->cont_caught)
		sigaddset(&ours, SIGCONT);
	sigprocmask(SIG_BLOCK, &ours, NULL);
	for (size_t i = 0; i < n_signals(); i++)
		if (st->caught[i])
			sigaction(signal_at(i), &sa, NULL);
	if (st->cont_caught) {
		sa.sa_handler = note_continued;
		sigaction(SIGCONT, &sa, NULL);
	}
}

static void release_signals(struct prompt_state *st)
{
	for (size_t i = 0; i < n_signals(); i++)
		if (st->caught[i])
			sigaction(signal_at(i), &st->saved_action[i], NULL);
	if (st->cont_caught)
		sigaction(SIGCONT, &st->saved_cont, NULL);
	sigprocmask(SIG_SETMASK, &st->saved_mask, NULL);
}

static void echo_off(struct prompt_state *st)
{
	st->termios_saved = tcgetattr(st->fd, &st->saved_termios) == 0;
	if (!st->termios_saved)
		return;   /* not a terminal: nothing is echoed anyway */
	st->quiet_termios = st->saved_termios;
	st->quiet_termios.c_lflag &= (tcflag_t) ~(ECHO | ECHOE | ECHOK | ECHONL);
	/* TCSAFLUSH: what was typed ahead of the prompt is not the answer */
	if (tcsetattr(st->fd, TCSAFLUSH, &st->quiet_termios) < 0)
		st->termios_saved = false;
}

/* Continued after a stop (^Z, then fg) at a hidden prompt: the shell gave
 * the terminal its own settings back when the job stopped, echo on, and
 * what is typed after fg would be shown.  Echo off again (TCSANOW: what
 * was typed since is part of the answer), and the prompt again, so the
 * user sees where the answer goes.  In the background, the tcsetattr
 * stops the process (SIGTTOU) until it is in the foreground again. */
static void hidden_again(struct prompt_state *st)
{
	if (!st->termios_saved)
		return;
	(void)tcsetattr(st->fd, TCSANOW, &st->quiet_termios);
	fputs(st->prompt, stderr);
	fflush(stderr);
}

static void restore_terminal(struct prompt_state *st)
{
	sigset_t ttou, old;

	if (!st->termios_saved)
		return;
	/* a background process group would be stopped by SIGTTOU here */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	(void)tcsetattr(st->fd, TCSANOW, &st->saved_termios);
	sigprocmask(SIG_SETMASK, &old, NULL);
	st->termios_saved = false;
}

/* Put everything back; if a signal ended the prompt, deliver it again
 * with the program's own disposition.  Returns only if the program
 * survives the signal (or there was none). */
static void end_prompt(struct prompt_state *st, bool hidden)
{
	int sig = caught_signal;

	if (st->termios_saved && hidden)
		(void)!write(STDERR_FILENO, "\n", 1);   /* the Enter was not echoed */
	restore_terminal(st);
	release_signals(st);
	if (sig) {
		caught_signal = 0;
		raise(sig);
	}
}

enum read_result { READ_LINE, READ_EOF, READ_TOO_LONG, READ_SIGNAL, READ_ERROR };

/* Read one line into buf (NUL-terminated, no newline).  A terminal in
 * canonical mode hands over at most one line a read; anything else is
 * read a byte at a time so that nothing after the newline is taken from
 * the next reader.  An overlong line is read to its end and dropped. */
static enum read_result read_answer(struct prompt_state *st, char *buf, size_t size)
{
	bool tty = st->termios_saved || isatty(st->fd);
	size_t len = 0;
	bool too_long = false;

	for (;;) {
		struct pollfd p = { .fd = st->fd, .events = POLLIN };
		char chunk[256];
		ssize_t n;

		if (ppoll(&p, 1, NULL, &st->wait_mask) < 0) {
			if (errno != EINTR)
				return READ_ERROR;
			if (caught_signal)
				return READ_SIGNAL;
			if (continued) {
				continued = 0;
				hidden_again(st);
			}
			continue;
		}
		n = read(st->fd, chunk, tty ? sizeof chunk : 1);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return READ_ERROR;
		}
		if (n == 0) {
			hs_wipe(chunk, sizeof chunk);
			return READ_EOF;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] == '\n') {
				buf[len] = '\0';
				hs_wipe(chunk, sizeof chunk);
				return too_long ? READ_TOO_LONG : READ_LINE;
			}
			if (len + 1 < size)
				buf[len++] = chunk[i];
			else
				too_long = true;
		}
		hs_wipe(chunk, sizeof chunk);
	}
}

/* Ask one question; a malloc'd copy of the answer, or NULL. */
static char *ask(const char *prompt, bool hidden)
{
	struct prompt_state st = { .fd = STDIN_FILENO, .prompt = prompt };
	char buf[PAM_MAX_RESP_SIZE];
	char *answer = NULL;
	enum read_result r;

	catch_signals(&st);
	if (hidden)
		echo_off(&st);
	fputs(prompt, stderr);
	fflush(stderr);
	r = read_answer(&st, buf, sizeof buf);
	end_prompt(&st, hidden);
	if (r == READ_LINE)
		answer = strdup(buf);
	hs_wipe(buf, sizeof buf);
	if (r == READ_TOO_LONG)
		fprintf(stderr, "%s: answer too long (at most %d bytes)\n", hs_cli_prog(),
			PAM_MAX_RESP_SIZE - 1);
	return answer;
}

/* The script's answer to a prompt: hidden ones only, no script answers
 * what only a person could. */
static char *script_answer(const struct hs_pam_script *sc, int style, const char *prompt)
{
	const char *answer = style == PAM_PROMPT_ECHO_OFF ? sc->hidden(sc->ctx, prompt) : NULL;

	return answer ? strdup(answer) : NULL;
}

int hs_ttyconv(int num_msg, const struct pam_message **msg, struct pam_response **resp,
               void *appdata_ptr)
{
	const struct hs_pam_script *sc = appdata_ptr;
	struct pam_response *replies;

	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG || !msg || !resp)
		return PAM_CONV_ERR;
	replies = calloc((size_t)num_msg, sizeof *replies);
	if (!replies)
		return PAM_BUF_ERR;
	for (int i = 0; i < num_msg; i++) {
		const char *text = msg[i] && msg[i]->msg ? msg[i]->msg : "";
		int style = msg[i] ? msg[i]->msg_style : -1;

		switch (style) {
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			replies[i].resp = sc ? script_answer(sc, style, text)
					     : ask(text, style == PAM_PROMPT_ECHO_OFF);
			if (!replies[i].resp)
				goto fail;
			break;
		case PAM_ERROR_MSG:
			if (sc && sc->error)
				sc->error(sc->ctx, text);
			else
				fprintf(stderr, "%s\n", text);
			break;
		case PAM_TEXT_INFO:
			fprintf(stdout, "%s\n", text);
			fflush(stdout);
			break;
		default:
			goto fail;
		}
	}
	*resp = replies;
	return PAM_SUCCESS;
fail:
	/* every answer wiped: they may be passwords */
	for (int i = 0; i < num_msg; i++)
		hs_free_secret(replies[i].resp);
	free(replies);
	return PAM_CONV_ERR;
}
