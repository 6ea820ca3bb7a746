/* placeholder: implemented by its owner */
#include "userdir.h"
