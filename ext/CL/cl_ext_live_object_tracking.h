/*
 * cl_altera_live_object_tracking / cl_intelfpga_live_object_tracking,
 * as implemented by the livetrack OpenCL layer.
 *
 * The functions are not exported by the ICD loader: fetch them with
 * clGetExtensionFunctionAddressForPlatform(platform, "clReportLiveObjectsIntelFPGA")
 * (or the ...Altera names). See ext/live_object_tracking.md for the
 * behaviour livetrack guarantees.
 */
#ifndef CL_EXT_LIVE_OBJECT_TRACKING_H
#define CL_EXT_LIVE_OBJECT_TRACKING_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define cl_altera_live_object_tracking 1
#define CL_ALTERA_LIVE_OBJECT_TRACKING_EXTENSION_NAME "cl_altera_live_object_tracking"
#define cl_intelfpga_live_object_tracking 1
#define CL_INTELFPGA_LIVE_OBJECT_TRACKING_EXTENSION_NAME "cl_intelfpga_live_object_tracking"
/* 1.0.0 as CL_MAKE_VERSION(1, 0, 0) packs it; spelled out, since cl.h
 * defines CL_MAKE_VERSION only for programs that target OpenCL 3.0, and
 * the extension is for any version. */
#define CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION ((cl_uint)1 << 22)

/* Called once per live object, serially, newest object first. It must
 * return: leaving it by longjmp or an exception leaks the report's copy
 * of the live set (ext/live_object_tracking.md). */
typedef void(CL_CALLBACK *cl_live_object_report_fn)(void *user_data, void *obj_ptr, const char *type_name,
                                                    cl_uint refcount);

typedef void(CL_API_CALL *clTrackLiveObjectsIntelFPGA_fn)(cl_platform_id platform);
typedef void(CL_API_CALL *clReportLiveObjectsIntelFPGA_fn)(cl_platform_id platform, cl_live_object_report_fn report_fn,
                                                           void *user_data);
typedef clTrackLiveObjectsIntelFPGA_fn clTrackLiveObjectsAltera_fn;
typedef clReportLiveObjectsIntelFPGA_fn clReportLiveObjectsAltera_fn;

#if !defined(CL_NO_PROTOTYPES) && !defined(CL_NO_EXTENSION_PROTOTYPES)
/* Declared for completeness; call them through the addresses above. */
extern CL_API_ENTRY void CL_API_CALL clTrackLiveObjectsIntelFPGA(cl_platform_id platform);
extern CL_API_ENTRY void CL_API_CALL clReportLiveObjectsIntelFPGA(cl_platform_id platform,
                                                                  cl_live_object_report_fn report_fn, void *user_data);
extern CL_API_ENTRY void CL_API_CALL clTrackLiveObjectsAltera(cl_platform_id platform);
extern CL_API_ENTRY void CL_API_CALL clReportLiveObjectsAltera(cl_platform_id platform,
                                                               cl_live_object_report_fn report_fn, void *user_data);
#endif

#ifdef __cplusplus
}
#endif

#endif
