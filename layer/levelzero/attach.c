/*
 * How liblivetrack_ze.so attaches: from its constructor, when LD_PRELOAD
 * brings it in, before the program's main.
 *
 * The loader's tracing layer sees every call the program makes, whether
 * the program is linked with -lze_loader or dlopens the loader and looks
 * functions up with dlsym: both reach the one loader this library links.
 * Loader 1.8 loads the tracing layer only when ZE_ENABLE_TRACING_LAYER=1
 * is set at the first zeInit, and zelTracerCreate fails before zeInit, so
 * the constructor calls zeInit itself with the variable set (unless the
 * user set it either way). The program's own zeInit later gets the
 * driver's answer as before.
 *
 * Without a driver or a tracing layer, one line says so and the program
 * runs untouched.
 */
#include <level_zero/layers/zel_tracing_api.h>
#include <stdlib.h>
#include <string.h>

#include "ze_front_end.h"

/* zelTracerCreate wants non-NULL user data; the callbacks do not use it. */
static int tracer_user_data;

__attribute__((constructor)) static void ltze_attach(void)
{
    /* Set only for the loader's start-up below: the program and its
     * children then see the environment they were given. */
    int we_set_it = getenv("ZE_ENABLE_TRACING_LAYER") == NULL;
    if (we_set_it)
        setenv("ZE_ENABLE_TRACING_LAYER", "1", 1);
    ltze_declare_types();
    /* Creation call sites must start at the program's frame: our own
     * frames and the loader's are not the program's, whatever the files
     * are called on this system. */
    livetrack_add_internal_module((const void *)ltze_attach);
    livetrack_add_internal_module((const void *)zeInit);

    ze_result_t result = zeInit(0);
    if (we_set_it)
        unsetenv("ZE_ENABLE_TRACING_LAYER");
    if (result != ZE_RESULT_SUCCESS) {
        /* `livetrack run` arms every front end; it asks for silence when
         * the user did not name Level Zero, so OpenCL-only programs on a
         * machine without a Level Zero driver do not get this line. */
        if (!livetrack_quiet_absent_api())
            ltze_note("zeInit failed (0x%x): no driver, so no Level Zero objects are tracked", (unsigned)result);
        return;
    }
    zel_tracer_desc_t desc = {.stype = ZEL_STRUCTURE_TYPE_TRACER_DESC, .pNext = NULL, .pUserData = &tracer_user_data};
    zel_tracer_handle_t tracer = NULL;
    result = zelTracerCreate(&desc, &tracer);
    if (result != ZE_RESULT_SUCCESS) {
        const char *setting = we_set_it ? "1 (set by livetrack)" : getenv("ZE_ENABLE_TRACING_LAYER");
        ltze_note("the loader's tracing layer is not available (zelTracerCreate: 0x%x, ZE_ENABLE_TRACING_LAYER=%s); "
                  "no Level Zero objects are tracked",
                  (unsigned)result, setting ? setting : "");
        return;
    }
    /* All or nothing: seeing destroys without their creates would report
     * misuse that is not there. */
    const char *failed = ltze_register_callbacks(tracer);
    if (failed || (result = zelTracerSetEnabled(tracer, 1)) != ZE_RESULT_SUCCESS) {
        ltze_note("%s failed; no Level Zero objects are tracked", failed ? failed : "zelTracerSetEnabled");
        zelTracerDestroy(tracer);
    }
}
