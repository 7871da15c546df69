/*
 * The matcher of suppression patterns (format in wildcard.h).
 *
 * Iterative, with one point to come back to: the last `*` seen. When the
 * bytes after it stop matching, that `*` takes one more byte of the text
 * and the match resumes after it. An earlier `*` never needs to take
 * more: whatever it would take, the later one can take instead. So the
 * time is at most pattern length times text length, with no recursion
 * (names of templated C++ functions run to kilobytes).
 */
#include <stddef.h>

#include "wildcard.h"

int lt_wildcard_matches(const char *pattern, const char *text)
{
    if (!text)
        return 0;
    const char *after_star = NULL; /* the pattern just after the last `*`; NULL before any */
    const char *star_text = NULL;  /* where the text stood after what that `*` has taken */
    while (*text) {
        if (*pattern == '*') {
            after_star = ++pattern;
            star_text = text;
        } else if (*pattern && (*pattern == '?' || *pattern == *text)) {
            pattern++;
            text++;
        } else if (after_star) {
            pattern = after_star;
            text = ++star_text;
        } else {
            return 0;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}
