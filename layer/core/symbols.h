/*
 * Symbolization (symbols.c): return address -> function, file:line,
 * module, through elfutils' libdw. Only reports call it, never the hot
 * path. Each address is looked up once (a cache sits in front of libdw,
 * which can take 0.2 ms per lookup in a large library). Thread-safe.
 */
#ifndef LIVETRACK_SYMBOLS_H
#define LIVETRACK_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "livetrack/livetrack.h"

/* Describe one captured return address (the call is at address - 1).
 * Writes the inlined calls first (innermost first, inlined = 1) and the
 * enclosing function last, at most `max` frames; returns how many. Always
 * at least one when max >= 1: a frame with only the module and offset
 * when nothing else is known (or only the address, outside any module).
 * A longer chain loses its outermost frames: the innermost holds the
 * exact line. Strings stay valid until exit. */
size_t lt_symbolize_address(uintptr_t address, livetrack_frame *out, size_t max);

/* Whose code a return address lies in. Livetrack's own libraries are
 * told apart from the loaders and runtimes because a frame of theirs
 * further out than the program's frames means livetrack called out and
 * the program was called back (a callback wrapper): stacks.c's app_start. */
typedef enum lt_frame_owner {
    LT_FRAME_PROGRAM,   /* any module not below, and addresses in none */
    LT_FRAME_RUNTIME,   /* libOpenCL, libze_loader, libze_tracing_layer, libcuda, libcudart, libcupti,
                           libnvidia-*, and the modules named with livetrack_add_internal_module() */
    LT_FRAME_LIVETRACK, /* liblivetrack*: the core and its front ends */
} lt_frame_owner;

lt_frame_owner lt_address_owner(uintptr_t address);

/* 1 when the address lies in a module whose frames are not the
 * application's: livetrack's own or a loader's or runtime's. */
int lt_address_is_internal(uintptr_t address);

#endif
