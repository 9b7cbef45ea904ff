#ifndef PUSHPROVIDER_BUILD_INFO_H
#define PUSHPROVIDER_BUILD_INFO_H

/* The git commit this binary was built from, or "unknown". Package.swift passes it as a define on this target
 * only (from $PUSHPROVIDER_COMMIT, which the Makefile sets), so a new commit recompiles this one file and
 * relinks, instead of invalidating every module. Kept out of the header so importers never see the macro. */
const char *pp_build_commit(void);

#endif
