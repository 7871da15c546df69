/*
 * The extension header compiles for every OpenCL version a program may
 * target (CL_TARGET_OPENCL_VERSION is set per object library in
 * CMakeLists.txt), and its version constant is a constant: an expression
 * of a macro the target's cl.h lacks would fail the static assertion.
 */
#include "CL/cl_ext_live_object_tracking.h"

_Static_assert(CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION == (1u << 22), "the extension's version is 1.0.0");

/* The types a program fetches the functions as. */
clTrackLiveObjectsIntelFPGA_fn ext_header_track_type;
clReportLiveObjectsAltera_fn ext_header_report_type;
