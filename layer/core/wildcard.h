/*
 * Suppression patterns (wildcard.c): `*` matches any run of bytes, `/`
 * included, and `?` exactly one byte; every other byte stands for itself.
 * Not fnmatch: names copied from a report hold `[`, `]` and `\`
 * (`make_name[abi:cxx11](_cl_context*)`, `operator[]`, Windows-style paths),
 * and a glob would read them as bracket expressions and escapes.
 */
#ifndef LIVETRACK_WILDCARD_H
#define LIVETRACK_WILDCARD_H

/* 1 when `pattern` matches the whole of `text`; 0 when not, or text is NULL. */
int lt_wildcard_matches(const char *pattern, const char *text);

#endif
