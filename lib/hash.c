/* placeholder: implemented by its owner */
#include "hash.h"
