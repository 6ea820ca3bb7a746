/* placeholder: implemented by its owner */
#include "pwhelper.h"
