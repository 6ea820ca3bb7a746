/* Environment variable names; see envname.h. */
#include "envname.h"

#include <string.h>

#include "util.h"

#define ENV_NAME_MAX 256

bool hs_envname_valid(const char *name, size_t len)
{
	if (len == 0 || len > ENV_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

bool hs_envname_unsafe(const char *name, size_t len)
{
	/* glibc's own list for set-id programs (ld.so drops these from a
	 * setuid su anyway; runuser is run by root and would pass them on),
	 * what makes a shell or an interpreter run code on start-up, and
	 * the terminal library's and other loaders' search paths
	 * (shadow-utils' newgrp drops a similar list), and what names a
	 * systemd service's private state (its credentials, notification
	 * socket, passed fds, state directories): a session of another user
	 * started from inside a service must not reach them. */
	static const char *const exact[] = {
		"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN",
		"LOCPATH", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",
		"TZDIR", "KRB_CONF", "LIBPATH", "PATH_LOCALE",
		"TERMCAP", "TERMINFO", "TERMINFO_DIRS", "TERMPATH",
		"IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "GLOBIGNORE",
		"PROMPT_COMMAND",
		"PERL5LIB", "PERLLIB", "PERL5OPT", "PERL5DB", "PYTHONPATH", "PYTHONHOME",
		"PYTHONSTARTUP", "PYTHONINSPECT", "RUBYLIB", "RUBYOPT", "NODE_OPTIONS",
		"NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"LUA_INIT", "TCLLIBPATH",
		"CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
		"LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC", "INVOCATION_ID",
		"JOURNAL_STREAM", "RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CACHE_DIRECTORY",
		"LOGS_DIRECTORY", "CONFIGURATION_DIRECTORY", "MAINPID", "MANAGERPID",
		"SYSTEMD_EXEC_PID", "MEMORY_PRESSURE_WATCH", "MEMORY_PRESSURE_WRITE", "FDSTORE",
	};
	static const char *const prefix[] = {
		"LD_", "_RLD_", "MALLOC_", "GLIBC_", "BASH_FUNC_", "LUA_INIT_",
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(exact); i++)
		if (strlen(exact[i]) == len && memcmp(exact[i], name, len) == 0)
			return true;
	for (size_t i = 0; i < HS_ARRAY_SIZE(prefix); i++) {
		size_t pl = strlen(prefix[i]);
		if (len >= pl && memcmp(prefix[i], name, pl) == 0)
			return true;
	}
	return false;
}
