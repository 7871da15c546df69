/*
 * A Level Zero program that leaks known objects, written once and run two
 * ways: ze_leaky_linked calls the loader it is linked with, ze_leaky_dlopen
 * dlopens the loader and looks every function up with dlsym. Both hand
 * the scenario the same table of functions.
 *
 * The scenario writes a manifest of what it leaked (one line per object:
 * type, handle, bytes, source line of the creating call) for the checker,
 * and on stdout only what the program computed and what the driver
 * answered, so a run with livetrack and one without must print the same.
 */
#ifndef LIVETRACK_ZE_LEAK_SCENARIO_H
#define LIVETRACK_ZE_LEAK_SCENARIO_H

#include <level_zero/ze_ddi.h>
#include <stdio.h>

#define SCENARIO_FUNCTIONS(X)                                                                               \
    X(Init) X(DriverGet) X(DeviceGet) X(ContextCreate) X(ContextDestroy) X(CommandQueueCreate)              \
    X(CommandQueueDestroy) X(CommandQueueExecuteCommandLists) X(CommandQueueSynchronize) X(CommandListCreate) \
    X(CommandListCreateImmediate) X(CommandListClose) X(CommandListReset) X(CommandListDestroy)             \
    X(CommandListAppendMemoryCopy) X(ModuleCreate) X(ModuleDestroy) X(ModuleBuildLogDestroy) X(KernelCreate) \
    X(KernelDestroy) X(EventPoolCreate) X(EventPoolDestroy) X(EventCreate) X(EventDestroy) X(FenceCreate)    \
    X(FenceDestroy) X(FenceHostSynchronize) X(ImageCreate) X(ImageDestroy) X(SamplerCreate) X(SamplerDestroy) \
    X(PhysicalMemCreate) X(PhysicalMemDestroy) X(VirtualMemReserve) X(VirtualMemFree) X(MemAllocDevice)     \
    X(MemAllocHost) X(MemAllocShared) X(MemFree) X(EventPoolGetIpcHandle) X(EventPoolOpenIpcHandle)          \
    X(EventPoolCloseIpcHandle) X(MemGetIpcHandle) X(MemOpenIpcHandle) X(MemCloseIpcHandle)

/* zeContextCreate is reached as functions->ContextCreate. */
typedef struct scenario_functions {
#define AS_FIELD(name) ze_pfn##name##_t name;
    SCENARIO_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
} scenario_functions;

/* The objects the scenario leaks, for checkers to compare with. */
#define SCENARIO_LEAKED_OBJECTS 21

/* Runs the scenario; writes the manifest to `manifest` (may be NULL).
 * Returns the process exit status: 0 when every call answered as
 * expected, and also 0 when there is no driver (zeInit fails; the
 * scenario then says so on stdout and does nothing). */
int run_leak_scenario(const scenario_functions *functions, FILE *manifest);

#endif
