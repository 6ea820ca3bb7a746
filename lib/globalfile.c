/* placeholder: implemented by its owner */
#include "globalfile.h"
