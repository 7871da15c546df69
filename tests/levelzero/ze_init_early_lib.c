/*
 * A library whose constructor calls zeInit, as some runtimes' static
 * initializers do: linked into ze_init_early, it runs before the
 * preloaded front end's constructor has (ze_init_order).
 */
#include <level_zero/ze_api.h>

static ze_result_t result = ZE_RESULT_ERROR_UNKNOWN;

__attribute__((constructor)) static void init_early(void) { result = zeInit(0); }

/* What the constructor's zeInit returned. */
__attribute__((visibility("default"))) ze_result_t ze_init_early_result(void) { return result; }
