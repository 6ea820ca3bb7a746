/* The terminal conversation of every program of ours that prompts (passwd,
 * chsh, chfn, chage, login, su, newgrp ...), in place of libpam_misc's.
 *
 * Why our own: libpam_misc leaves the terminal with echo off when a signal
 * ends the program at a hidden prompt (^C, a hang-up, kill), and it reads
 * an overlong line only in part, so the rest reaches the parent shell as
 * a command line.  hs_ttyconv restores the terminal on every way out and
 * always reads the line to its end. */
#ifndef HS_TTYCONV_H
#define HS_TTYCONV_H

#include <signal.h>

#include <security/pam_appl.h>

/* A pam_conv function.  Prompts go to stderr, answers come from stdin (a
 * terminal or not), PAM_TEXT_INFO goes to stdout and PAM_ERROR_MSG to
 * stderr, as libpam_misc does.  appdata_ptr is NULL, or a struct
 * hs_pam_script (pamconv.h) that answers in place of the terminal (passwd
 * --stdin, chpasswd).
 *
 * While it waits for an answer, the asynchronous signals whose default
 * action ends the process (and that the program neither ignores nor
 * blocks) are caught; one that arrives restores the terminal and the
 * program's own dispositions and signal mask, and is then raised again,
 * so the program ends (or its own handler runs) as it would have.  A
 * hidden prompt continued after a stop (^Z, fg) turns echo off again, which
 * the shell had turned back on, and shows the prompt again.  EOF
 * and an answer cut at PAM_MAX_RESP_SIZE - 1 bytes fail the conversation
 * (the rest of the line is read and dropped first).  SIGKILL and SIGSTOP
 * cannot be caught: after them the terminal is as the prompt left it. */
int hs_ttyconv(int num_msg, const struct pam_message **msg, struct pam_response **resp,
               void *appdata_ptr);

/* The signals hs_ttyconv catches while it waits (those whose default
 * action ends the process, the real-time ones included), for a prompt of
 * a program's own that must give the terminal back on the same ones
 * (newgrp's group password, which has no PAM conversation). */
void hs_ttyconv_ending_signals(sigset_t *set);

#endif
