/* placeholder: implemented by its owner */
#include "config.h"
