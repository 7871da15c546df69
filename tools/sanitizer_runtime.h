/*
 * The sanitizer runtime a program needs first in LD_PRELOAD: livetrack
 * run puts its front ends there, and AddressSanitizer refuses to start
 * unless its runtime is the first library loaded.
 */
#ifndef LIVETRACK_SANITIZER_RUNTIME_H
#define LIVETRACK_SANITIZER_RUNTIME_H

#include <stddef.h>

/* 1 when the file name (or path) is a sanitizer runtime: libasan.so.8,
 * libclang_rt.asan-x86_64.so, ... */
int is_sanitizer_runtime(const char *path);

/* The sanitizer runtime `program` (found as execvp finds it) links, by
 * the name its dynamic section gives (libasan.so.8), into `out`. 0 when
 * it links none, is a script, or cannot be read. */
int sanitizer_runtime_needed(const char *program, char *out, size_t size);

#endif
