/*
 * Whether a shared library can be loaded here: every library it needs
 * is found. livetrack run asks before it preloads a front end, since a
 * preloaded library whose dependency is missing stops the program before
 * main ("error while loading shared libraries") instead of being left out.
 */
#ifndef LIVETRACK_LIBRARY_LOADS_H
#define LIVETRACK_LIBRARY_LOADS_H

#include <stddef.h>

enum library_loading {
    LIBRARY_LOADS,      /* the dynamic loader found all it needs */
    LIBRARY_FAILS,      /* it did not; `why` holds the loader's words */
    LIBRARY_UNKNOWN,    /* the loader could not be asked */
};

/* Asks this process's dynamic loader to list `library`'s dependencies
 * (ld.so --list: nothing of the library runs) in this environment, less
 * LD_PRELOAD. */
enum library_loading library_loads(const char *library, char *why, size_t size);

#endif
