#include "build_info.h"

#ifndef PUSHPROVIDER_COMMIT
#define PUSHPROVIDER_COMMIT "unknown"
#endif

const char *pp_build_commit(void) { return PUSHPROVIDER_COMMIT; }
