/* placeholder: implemented by its owner */
#include "policy.h"
