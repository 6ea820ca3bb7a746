/* The on-disk contract (DESIGN.md section 2).  Every path and mode the
 * suite uses is named here and nowhere else. */
#ifndef HS_LAYOUT_H
#define HS_LAYOUT_H

#include "names.h"   /* HS_NAME_MAX */

#define HS_TREE_DIR        "/etc/hardened-shadow"
#define HS_GROUP_TREE      "hardened-shadow"       /* may traverse HS_TREE_DIR */
#define HS_GROUP_AUTH      "hardened-shadow-auth"  /* group of every per-user dir and file */

#define HS_TREE_MODE       0710   /* root:hardened-shadow */
#define HS_USERDIR_MODE    02710  /* USER:hardened-shadow-auth */
#define HS_SHADOW_MODE     0640   /* USER:hardened-shadow-auth */
#define HS_SHELL_MODE      0640   /* USER:hardened-shadow-auth */
#define HS_AGING_MODE      0644   /* root:hardened-shadow-auth */

#define HS_FILE_SHADOW     "shadow"
#define HS_FILE_SHELL      "shell"
#define HS_FILE_AGING      "aging"

/* Path buffer sizes, one family (HS_PATHBUF_*):
 *  HS_PATHBUF_USER  a user's directory or a name inside it
 *                   (/etc/hardened-shadow/USER/shadow, a temporary or
 *                   reserved name of that length);
 *  HS_PATHBUF_ETC   a global file with a suffix (FILE.lock, FILE-,
 *                   FILE.PID, a temporary name);
 *  HS_PATHBUF_MAX   any path a record may hold (a home, a shell) with a
 *                   suffix. */
#define HS_PATHBUF_USER    (sizeof(HS_TREE_DIR) + HS_NAME_MAX + 64)
#define HS_PATHBUF_ETC     512
#define HS_PATHBUF_MAX     (4096 + 64)

/* Size caps for per-user files: anything bigger is hostile. */
#define HS_USERFILE_MAX    4096

/* Global account files (section 4). */
#define HS_ETC_DIR         "/etc"
#define HS_ETC_PASSWD      "/etc/passwd"
#define HS_ETC_GROUP       "/etc/group"
#define HS_ETC_GSHADOW     "/etc/gshadow"
#define HS_ETC_SHADOW      "/etc/shadow"
#define HS_ETC_SUBUID      "/etc/subuid"
#define HS_ETC_SUBGID      "/etc/subgid"
#define HS_ETC_SHELLS      "/etc/shells"
#define HS_ETC_LOGIN_DEFS  "/etc/login.defs"
#define HS_ETC_USERADD     "/etc/default/useradd"
#define HS_ETC_PWD_LOCK    "/etc/.pwd.lock"
#define HS_ETC_TCB         "/etc/tcb"

/* Records indexed by uid that others write (pam_lastlog; shadow-utils'
 * login without PAM): useradd only resets a new account's records. */
#define HS_LASTLOG_FILE    "/var/log/lastlog"
#define HS_FAILLOG_FILE    "/var/log/faillog"
/* Failed logins (lastb) where login.defs names no FTMP_FILE: util-linux's
 * _PATH_BTMP (glibc has no name for it). */
#define HS_BTMP_FILE       "/var/log/btmp"

/* Global files are read whole; this caps hostile growth (a 100,000-user
 * /etc/passwd is about 8 MiB). */
#define HS_GLOBALFILE_MAX  (256u * 1024 * 1024)

/* pwconv and pwunconv. */
/* Reserved names (DESIGN §2: a leading '.' is never a user) inside
 * HS_TREE_DIR.  Contents: "shadow\n" or "tcb\n", the source pwconv read. */
#define HS_CONVERT_MARK_PWCONV   ".pwconv-incomplete"
#define HS_CONVERT_MARK_PWUNCONV ".pwunconv-incomplete"
/* /etc/shadow's NIS compat lines ("+", "-name", "+@netgroup" ...), kept
 * verbatim by pwconv (root:root 0600) and put back by pwunconv. */
#define HS_CONVERT_NIS_SHADOW    ":nis-shadow"

/* Prefix of the temporary trees in /etc: pwconv builds the new tree under
 * it, and a tree being removed is renamed to it first.  Any directory
 * /etc/.hardened-shadow.XXXXXX found while holding the locks is a leftover
 * of a crash and is removed. */
#define HS_CONVERT_TMP_PREFIX    ".hardened-shadow."

#ifndef HS_LIBEXECDIR
#define HS_LIBEXECDIR      "/usr/libexec/hardened-shadow"
#endif
#define HS_SHELL_PROXY     HS_LIBEXECDIR "/shell-proxy"
#define HS_SHELL_HELPER    HS_LIBEXECDIR "/shell-helper"
#ifndef HS_SBINDIR
#define HS_SBINDIR         "/usr/sbin"
#endif
/* hs-ldif import hands its accounts to newusers (one batch machinery) */
#define HS_NEWUSERS        HS_SBINDIR "/newusers"

#endif
