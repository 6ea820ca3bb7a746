/* placeholder: implemented by its owner */
#include "account.h"
