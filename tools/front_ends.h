/*
 * The front-end libraries `livetrack run` loads into a program, and where
 * to find them: next to the running binary, in the installed layout
 * (<bindir>/<relative libdir>/) or in the build tree (<build>/layer/...).
 */
#ifndef LIVETRACK_FRONT_ENDS_H
#define LIVETRACK_FRONT_ENDS_H

#include <stddef.h>

typedef enum front_end_kind { FRONT_END_OPENCL, FRONT_END_LEVEL_ZERO, FRONT_END_CUDA, FRONT_END_COUNT } front_end_kind;

typedef struct front_end {
    const char *name;    /* as --api names it: "opencl", "ze", "cuda" */
    const char *alias;   /* another accepted name, or NULL */
    const char *title;   /* for people: "OpenCL" */
    const char *library; /* file name: "liblivetrack_cl.so" */
    const char *build_dir; /* relative to the binary's directory in the build tree */
} front_end;

extern const front_end front_ends[FRONT_END_COUNT];

/* The absolute path of a front end's library, or 0 when it is not there
 * (`path` then lists the places looked at). */
int front_end_find(front_end_kind kind, char *path, size_t size);

#endif
