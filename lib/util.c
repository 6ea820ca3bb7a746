/* placeholder: implemented by its owner */
#include "util.h"
