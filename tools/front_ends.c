/*
 * Finding the front-end libraries from the binary's own location.
 *
 * The directories are relative paths fixed when livetrack is configured
 * (tools/CMakeLists.txt): installed, from CMAKE_INSTALL_BINDIR to
 * CMAKE_INSTALL_LIBDIR (usually "../lib"); in the build tree, from
 * tools/ to layer/<api>/. Relative, so `cmake --install --prefix` at any
 * place and a moved install tree still work. The installed layout is
 * tried first: a build tree never has <bindir>/../lib/liblivetrack_*.so.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front_ends.h"

#ifndef LIVETRACK_REL_LIBDIR
#define LIVETRACK_REL_LIBDIR "../lib"
#endif
#ifndef LIVETRACK_BUILD_REL_OPENCL
#define LIVETRACK_BUILD_REL_OPENCL "../layer/opencl"
#endif
#ifndef LIVETRACK_BUILD_REL_LEVEL_ZERO
#define LIVETRACK_BUILD_REL_LEVEL_ZERO "../layer/levelzero"
#endif
#ifndef LIVETRACK_BUILD_REL_CUDA
#define LIVETRACK_BUILD_REL_CUDA "../layer/cuda"
#endif

const front_end front_ends[FRONT_END_COUNT] = {
    [FRONT_END_OPENCL] = {"opencl", "cl", "OpenCL", "liblivetrack_cl.so", LIVETRACK_BUILD_REL_OPENCL},
    [FRONT_END_LEVEL_ZERO] = {"ze", "levelzero", "Level Zero", "liblivetrack_ze.so", LIVETRACK_BUILD_REL_LEVEL_ZERO},
    [FRONT_END_CUDA] = {"cuda", NULL, "CUDA", "liblivetrack_cuda.so", LIVETRACK_BUILD_REL_CUDA},
};

/* The directory of the running binary, from /proc/self/exe (argv[0] may
 * be a bare name found through PATH, or a symlink). */
static int binary_dir(char *dir, size_t size)
{
    ssize_t length = readlink("/proc/self/exe", dir, size - 1);
    if (length <= 0 || (size_t)length >= size - 1)
        return 0;
    dir[length] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

int front_end_find(front_end_kind kind, char *path, size_t size)
{
    char dir[PATH_MAX], candidate[PATH_MAX * 2], resolved[PATH_MAX];
    if (!binary_dir(dir, sizeof dir)) {
        snprintf(path, size, "(the directory of livetrack itself is unknown: no /proc/self/exe)");
        return 0;
    }
    const char *places[] = {LIVETRACK_REL_LIBDIR, front_ends[kind].build_dir};
    size_t used = 0;
    if (size)
        path[0] = '\0';
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        if (places[i][0] == '/')
            snprintf(candidate, sizeof candidate, "%s/%s", places[i], front_ends[kind].library);
        else
            snprintf(candidate, sizeof candidate, "%s/%s/%s", dir, places[i], front_ends[kind].library);
        /* realpath: the loaders want an absolute path without "..". */
        if (realpath(candidate, resolved) && access(resolved, R_OK) == 0) {
            snprintf(path, size, "%s", resolved);
            return 1;
        }
        if (used < size) {
            int wrote = snprintf(path + used, size - used, "%s%s", i ? ", " : "", candidate);
            used += wrote > 0 ? (size_t)wrote : 0;
        }
    }
    return 0;
}
