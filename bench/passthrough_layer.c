/*
 * bench/passthrough_layer.c: an OpenCL ICD layer that forwards every call
 * and does nothing else. bench/run loads it through OPENCL_LAYERS as the
 * "floor" side of the OpenCL rounds: what any layer costs, whatever it
 * does, because the loader now calls through one more dispatch table and
 * one more function per entry. Measured beside livetrack in the same
 * rounds, it splits livetrack's overhead into the part every layer pays
 * and the part that is livetrack's own work. Not installed, not a test.
 *
 * The wrappers come from the layer's own table of entry points
 * (layer/opencl/entry_points.h), so the floor has exactly the entries, and
 * the parameter lists, that livetrack wraps.
 */
#include <CL/cl_layer.h>
#include <string.h>

#include "small_layer.h"

#define LAYER_NAME "livetrack bench: pass-through layer (forwards every call)"

#include "entry_points.h"

static const struct _cl_icd_dispatch *next;
static struct _cl_icd_dispatch table;

/* The row's "on refusal" tells a void function (clSVMFree) from the rest. */
#define FORWARD_CODE(call) return call;
#define FORWARD_ERRCODE(call) return call;
#define FORWARD_NIL(call) return call;
#define FORWARD_NOTHING(call) call;

#define FORWARD(name, ret, refuse, params, args, ...) \
    static ret CL_API_CALL name##_forward params { FORWARD_##refuse(next->name args) }
#define NO_FORWARD(name)
LTCL_DISPATCH_TABLE(FORWARD, NO_FORWARD)

/* bench_opencl asks for this name to tell that the floor layer is the one
 * loaded (and that one is loaded at all); any other name is forwarded. */
#define MARKER_NAME "livetrackBenchPassthroughLayer"
static void marker(void) {}

static void *CL_API_CALL lookup_forward(cl_platform_id platform, const char *function_name)
{
    if (function_name && !strcmp(function_name, MARKER_NAME))
        return (void *)marker;
    return next->clGetExtensionFunctionAddressForPlatform(platform, function_name);
}

static void install(struct _cl_icd_dispatch *layer_table)
{
#define INSTALL(name, ...) layer_table->name = name##_forward;
#define KEEP(name)
    LTCL_DISPATCH_TABLE(INSTALL, KEEP)
    layer_table->clGetExtensionFunctionAddressForPlatform = lookup_forward;
}

LT_SMALL_LAYER(LAYER_NAME, next, table, install)
