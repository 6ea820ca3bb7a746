/* placeholder: implemented by its owner */
#include "names.h"
