/* placeholder: implemented by its owner */
#include "records.h"
