/* The core's only allocation functions (see core_internal.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "core_internal.h"

static atomic_int incomplete;

void *lt_calloc(size_t count, size_t size) { return calloc(count, size); }
void *lt_malloc(size_t size) { return malloc(size); }
void lt_free(void *pointer) { free(pointer); }

void lt_out_of_memory(const char *what)
{
    if (!atomic_exchange(&incomplete, 1))
        lt_diag("out of memory allocating %s: tracking is incomplete from now on "
                "(the program itself is not affected)", what);
}

int lt_tracking_incomplete(void) { return atomic_load(&incomplete); }
