/* Fuzz target for /etc/login.defs (hs_config_logindefs_parse); the driver and the
 * lookup checks are in fuzz_common.h.  The keys are the ones the suite
 * reads, plus an unknown one, the empty one and a wrongly cased one. */
#include "fuzz_common.h"

static const char *const keys[] = {
	"ENCRYPT_METHOD",
	"YESCRYPT_COST_FACTOR",
	"SHA_CRYPT_MIN_ROUNDS",
	"SHA_CRYPT_MAX_ROUNDS",
	"BCRYPT_MIN_ROUNDS",
	"BCRYPT_MAX_ROUNDS",
	"PASS_MAX_DAYS",
	"PASS_MIN_DAYS",
	"PASS_WARN_AGE",
	"UID_MIN",
	"UID_MAX",
	"SYS_UID_MIN",
	"SYS_UID_MAX",
	"GID_MIN",
	"GID_MAX",
	"SUB_UID_MIN",
	"SUB_UID_COUNT",
	"UMASK",
	"HOME_MODE",
	"USERGROUPS_ENAB",
	"CREATE_HOME",
	"MAIL_DIR",
	"FAIL_DELAY",
	"LOGIN_RETRIES",
	"LOGIN_TIMEOUT",
	"ENV_PATH",
	"ENV_SUPATH",
	"DEFAULT_HOME",
	"USERDEL_CMD",
	"MAX_MEMBERS_PER_GROUP",
	"SU_NAME",
	"NONEXISTENT_KEY",
	"",
	"umask",
};

FUZZ_CONFIG_TARGET(hs_config_logindefs_parse, keys)
