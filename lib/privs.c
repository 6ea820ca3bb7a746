/* placeholder: implemented by its owner */
#include "privs.h"
