/* Fuzz target for /etc/default/useradd (hs_config_useradd_defaults_parse); the
 * driver and the lookup checks are in fuzz_common.h.  The keys are the
 * ones useradd reads, plus an unknown one, the empty one and a wrongly
 * cased one. */
#include "fuzz_common.h"

static const char *const keys[] = {
	"GROUP",
	"GROUPS",
	"HOME",
	"INACTIVE",
	"EXPIRE",
	"SHELL",
	"SKEL",
	"CREATE_MAIL_SPOOL",
	"LOG_INIT",
	"USRSKEL",
	"NONEXISTENT_KEY",
	"",
	"shell",
};

FUZZ_CONFIG_TARGET(hs_config_useradd_defaults_parse, keys)
