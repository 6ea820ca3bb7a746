#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "hs-build-config.h"

static const char *prog_name = "hardened-shadow";

void hs_cli_set_prog(const char *name)
{
	if (name && *name)
		prog_name = name;
}

const char *hs_cli_prog(void)
{
	return prog_name;
}

__attribute__((format(printf, 1, 0)))
static void vwarn_line(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void hs_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn_line(fmt, ap);
	va_end(ap);
}

void hs_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn_line(fmt, ap);
	va_end(ap);
	exit(status);
}

void hs_print_version(void)
{
	printf("%s (hardened-shadow) %s\n", prog_name, HS_VERSION);
	if (fflush(stdout) != 0 || ferror(stdout))
		exit(1);
	exit(0);
}
