/* placeholder: implemented by its owner */
#include "fileio.h"
