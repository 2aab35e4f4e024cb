/* placeholder */
#include "driver.h"
