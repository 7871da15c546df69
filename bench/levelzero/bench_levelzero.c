/*
 * bench_levelzero: what liblivetrack_ze.so adds to cheap Level Zero calls.
 *
 * It runs itself as a worker, alternately without and with the front end
 * preloaded, against the test driver (tests/levelzero), and prints per
 * loop the median nanoseconds per iteration through the loader without
 * and with livetrack and their ratio. As in bench_opencl, `norm` divides
 * each sample by a run of the same loop calling the driver's own
 * functions directly (past the loader and its tracing layer), timed
 * moments apart in the same process, which cancels most of the machine's
 * speed drift; the ratio of the two sides' norms is the steadier figure.
 *
 * Note what "without" means: the loader without its tracing layer. With
 * livetrack the tracing layer is on, and its cost (seen alone in
 * set_group_size, a call livetrack does not watch) is part of livetrack's.
 */
#include <dlfcn.h>
#include <level_zero/ze_ddi.h>
#include <spawn.h>
#include <sys/wait.h>

#include "../bench_util.h"

extern char **environ;

#define DEFAULT_ROUNDS 11
#define DEFAULT_SAMPLES 15
#define DEFAULT_ITERATIONS 10000

/* The calls the loops make, through the loader or straight to the driver. */
typedef struct bench_api {
    ze_pfnMemAllocHost_t mem_alloc_host;
    ze_pfnMemFree_t mem_free;
    ze_pfnEventCreate_t event_create;
    ze_pfnEventDestroy_t event_destroy;
    ze_pfnCommandListCreate_t list_create;
    ze_pfnCommandListDestroy_t list_destroy;
    ze_pfnCommandListReset_t list_reset;
    ze_pfnKernelSetGroupSize_t kernel_set_group_size;
} bench_api;

typedef struct bench_objects {
    ze_context_handle_t context;
    ze_device_handle_t device;
    ze_event_pool_handle_t pool;
    ze_command_list_handle_t list;
    ze_kernel_handle_t kernel;
} bench_objects;

static const ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
static const ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
static const ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};

static void check(ze_result_t result, const char *what)
{
    if (result != ZE_RESULT_SUCCESS)
        bench_die("%s failed with 0x%x", what, (unsigned)result);
}

static void loop_mem(const bench_api *api, const bench_objects *objects, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        void *memory;
        check(api->mem_alloc_host(objects->context, &host_desc, 64, 0, &memory), "zeMemAllocHost");
        check(api->mem_free(objects->context, memory), "zeMemFree");
    }
}

static void loop_event(const bench_api *api, const bench_objects *objects, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        ze_event_handle_t event;
        check(api->event_create(objects->pool, &event_desc, &event), "zeEventCreate");
        check(api->event_destroy(event), "zeEventDestroy");
    }
}

static void loop_list(const bench_api *api, const bench_objects *objects, long iterations)
{
    for (long i = 0; i < iterations; i++) {
        ze_command_list_handle_t list;
        check(api->list_create(objects->context, objects->device, &list_desc, &list), "zeCommandListCreate");
        check(api->list_destroy(list), "zeCommandListDestroy");
    }
}

static void loop_reset(const bench_api *api, const bench_objects *objects, long iterations)
{
    for (long i = 0; i < iterations; i++)
        check(api->list_reset(objects->list), "zeCommandListReset");
}

static void loop_set_group_size(const bench_api *api, const bench_objects *objects, long iterations)
{
    for (long i = 0; i < iterations; i++)
        check(api->kernel_set_group_size(objects->kernel, 1, 1, 1), "zeKernelSetGroupSize");
}

typedef struct bench_loop {
    const char *name;
    const char *calls;
    void (*run)(const bench_api *api, const bench_objects *objects, long iterations);
} bench_loop;

static const bench_loop loops[] = {
    {"mem_alloc_free", "zeMemAllocHost + zeMemFree", loop_mem},
    {"event_create_destroy", "zeEventCreate + zeEventDestroy", loop_event},
    {"list_create_destroy", "zeCommandListCreate + zeCommandListDestroy", loop_list},
    {"list_reset", "zeCommandListReset (checked, not tracked)", loop_reset},
    {"set_group_size", "zeKernelSetGroupSize (not watched)", loop_set_group_size},
};
#define LOOP_COUNT (sizeof loops / sizeof loops[0])

/* ---- worker: one process, one side ---------------------------------------- */

static double median(double *values, size_t count)
{
    for (size_t i = 1; i < count; i++)
        for (size_t j = i; j > 0 && values[j - 1] > values[j]; j--) {
            double swap = values[j];
            values[j] = values[j - 1];
            values[j - 1] = swap;
        }
    return count ? (count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2) : 0;
}

/* The driver's own functions, from its tables (the driver the loader loaded). */
static bench_api direct_api(const char *driver_path)
{
    void *driver = dlopen(driver_path, RTLD_NOW | RTLD_NOLOAD);
    if (!driver)
        bench_die("the loader did not load the driver %s", driver_path);
    ze_pfnGetMemProcAddrTable_t get_mem;
    ze_pfnGetEventProcAddrTable_t get_event;
    ze_pfnGetCommandListProcAddrTable_t get_list;
    ze_pfnGetKernelProcAddrTable_t get_kernel;
    *(void **)&get_mem = dlsym(driver, "zeGetMemProcAddrTable");
    *(void **)&get_event = dlsym(driver, "zeGetEventProcAddrTable");
    *(void **)&get_list = dlsym(driver, "zeGetCommandListProcAddrTable");
    *(void **)&get_kernel = dlsym(driver, "zeGetKernelProcAddrTable");
    ze_mem_dditable_t mem;
    ze_event_dditable_t event;
    ze_command_list_dditable_t list;
    ze_kernel_dditable_t kernel;
    if (!get_mem || !get_event || !get_list || !get_kernel || get_mem(ZE_API_VERSION_CURRENT, &mem) ||
        get_event(ZE_API_VERSION_CURRENT, &event) || get_list(ZE_API_VERSION_CURRENT, &list) ||
        get_kernel(ZE_API_VERSION_CURRENT, &kernel))
        bench_die("%s does not hand out its tables", driver_path);
    return (bench_api){mem.pfnAllocHost, mem.pfnFree, event.pfnCreate, event.pfnDestroy,
                       list.pfnCreate, list.pfnDestroy, list.pfnReset, kernel.pfnSetGroupSize};
}

static int worker(long samples, long iterations, const char *driver_path, const char *front_end)
{
    check(zeInit(0), "zeInit");
    uint32_t count = 1;
    ze_driver_handle_t driver;
    bench_objects objects;
    check(zeDriverGet(&count, &driver), "zeDriverGet");
    count = 1;
    check(zeDeviceGet(driver, &count, &objects.device), "zeDeviceGet");
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 1};
    static const uint8_t module_input[] = "bench";
    ze_module_desc_t module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                    .inputSize = sizeof module_input, .pInputModule = module_input};
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "bench"};
    ze_module_handle_t module;
    check(zeContextCreate(driver, &context_desc, &objects.context), "zeContextCreate");
    check(zeEventPoolCreate(objects.context, &pool_desc, 0, NULL, &objects.pool), "zeEventPoolCreate");
    check(zeCommandListCreate(objects.context, objects.device, &list_desc, &objects.list), "zeCommandListCreate");
    check(zeModuleCreate(objects.context, objects.device, &module_desc, &module, NULL), "zeModuleCreate");
    check(zeKernelCreate(module, &kernel_desc, &objects.kernel), "zeKernelCreate");

    const bench_api through_loader = {zeMemAllocHost, zeMemFree, zeEventCreate, zeEventDestroy,
                                      zeCommandListCreate, zeCommandListDestroy, zeCommandListReset,
                                      zeKernelSetGroupSize};
    const bench_api direct = direct_api(driver_path);
    printf("# layer %s\n", dlopen(front_end, RTLD_NOW | RTLD_NOLOAD) ? "yes" : "no");
    double *loader_ns = calloc((size_t)samples, sizeof *loader_ns);
    double *direct_ns = calloc((size_t)samples, sizeof *direct_ns);
    double *norm = calloc((size_t)samples, sizeof *norm);
    if (!loader_ns || !direct_ns || !norm)
        bench_die("out of memory");
    for (size_t l = 0; l < LOOP_COUNT; l++) {
        loops[l].run(&through_loader, &objects, iterations / 10 + 1); /* warm up */
        loops[l].run(&direct, &objects, iterations / 10 + 1);
        for (long s = 0; s < samples; s++) {
            for (int side = 0; side < 2; side++) {
                /* Alternate which goes first. */
                int use_direct = (int)((side + s) % 2);
                double start = bench_now_ns();
                loops[l].run(use_direct ? &direct : &through_loader, &objects, iterations);
                double ns = (bench_now_ns() - start) / (double)iterations;
                (use_direct ? direct_ns : loader_ns)[s] = ns;
            }
            norm[s] = loader_ns[s] / direct_ns[s];
        }
        printf("%s %.2f %.2f %.4f\n", loops[l].name, median(loader_ns, (size_t)samples),
               median(direct_ns, (size_t)samples), median(norm, (size_t)samples));
    }
    free(loader_ns);
    free(direct_ns);
    free(norm);
    check(zeKernelDestroy(objects.kernel), "zeKernelDestroy");
    check(zeModuleDestroy(module), "zeModuleDestroy");
    check(zeCommandListDestroy(objects.list), "zeCommandListDestroy");
    check(zeEventPoolDestroy(objects.pool), "zeEventPoolDestroy");
    check(zeContextDestroy(objects.context), "zeContextDestroy");
    return 0;
}

/* ---- parent: rounds of workers ---------------------------------------------- */

typedef struct side_results {
    double *ns;   /* [loop][round] */
    double *norm; /* [loop][round] */
} side_results;

/* ZE_ENABLE_TRACING_LAYER=1, ZE_ENABLE_VALIDATION_LAYER=1 ...: the loader
 * puts a layer of its own between the benchmark and the driver. */
static int is_loader_layer_setting(const char *setting)
{
    const char *equals = strchr(setting, '=');
    if (strncmp(setting, "ZE_ENABLE_", 10) || !equals)
        return 0;
    for (const char *p = setting + 10; p + 5 <= equals; p++)
        if (!strncmp(p, "LAYER", 5))
            return 1;
    return 0;
}

/* Run one worker and read its medians into results[loop][round]. */
static void run_worker(const char *self, const char *driver, const char *front_end, int with, long samples,
                       long iterations, long round, long rounds, side_results *results)
{
    char samples_text[32], iterations_text[32], alt_drivers[1100], preload[1100];
    snprintf(samples_text, sizeof samples_text, "%ld", samples);
    snprintf(iterations_text, sizeof iterations_text, "%ld", iterations);
    snprintf(alt_drivers, sizeof alt_drivers, "ZE_ENABLE_ALT_DRIVERS=%s", driver);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", front_end);
    char *argv[] = {(char *)self, "--worker", "--samples", samples_text, "--iterations", iterations_text,
                    "--driver", (char *)driver, "--front-end", (char *)front_end, NULL};

    /* This environment without LD_PRELOAD, ZE_ENABLE_ALT_DRIVERS,
     * LIVETRACK_EXIT_REPORT and the loader's layers (`livetrack run` turns
     * its tracing layer on: "without" would then pay for it), then ours.
     * The front end turns on what it needs itself. */
    size_t count = 0;
    while (environ[count])
        count++;
    char **env = calloc(count + 4, sizeof *env);
    if (!env)
        bench_die("out of memory");
    size_t used = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "ZE_ENABLE_ALT_DRIVERS=", 22) &&
            strncmp(environ[i], "LIVETRACK_EXIT_REPORT=", 22) && !is_loader_layer_setting(environ[i]))
            env[used++] = environ[i];
    env[used++] = alt_drivers;
    env[used++] = "LIVETRACK_EXIT_REPORT=off";
    if (with)
        env[used++] = preload;
    env[used] = NULL;

    int pipe_ends[2];
    if (pipe(pipe_ends))
        bench_die("pipe: %s", strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
    pid_t pid;
    int spawned = posix_spawn(&pid, self, &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    free(env);
    close(pipe_ends[1]);
    if (spawned)
        bench_die("cannot run %s: %s", self, strerror(spawned));

    FILE *output = fdopen(pipe_ends[0], "r");
    char line[256], layer[8] = "";
    size_t found = 0;
    while (output && fgets(line, sizeof line, output)) {
        char name[64];
        double ns, direct_ns, norm;
        if (sscanf(line, "# layer %7s", layer) == 1)
            continue;
        if (sscanf(line, "%63s %lf %lf %lf", name, &ns, &direct_ns, &norm) != 4)
            continue;
        for (size_t l = 0; l < LOOP_COUNT; l++) {
            if (strcmp(name, loops[l].name) == 0) {
                results->ns[l * (size_t)rounds + (size_t)round] = ns;
                results->norm[l * (size_t)rounds + (size_t)round] = norm;
                found++;
            }
        }
    }
    if (output)
        fclose(output);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        bench_die("the worker failed (%s livetrack)", with ? "with" : "without");
    if (found != LOOP_COUNT)
        bench_die("the worker printed %zu of %zu results", found, LOOP_COUNT);
    if (strcmp(layer, with ? "yes" : "no") != 0)
        bench_die(with ? "%s did not load in the worker" : "a front end (%s) is loaded in the run without it",
                  front_end);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_levelzero [--rounds N] [--samples N] [--iterations N] [--driver PATH] [--front-end PATH]\n"
            "\n"
            "Times cheap Level Zero calls through the real loader and the test driver, in worker\n"
            "processes run alternately without and with liblivetrack_ze.so preloaded, and prints\n"
            "one line per loop: median ns per iteration without and with livetrack, their ratio,\n"
            "and 'norm', the ratio after dividing each sample by the same loop calling the driver\n"
            "directly in the same process (steadier on a noisy machine).\n"
            "\n"
            "  --rounds N       worker pairs, alternating which side runs first (default %d)\n"
            "  --samples N      timed samples per loop per worker (default %d)\n"
            "  --iterations N   iterations per sample (default %d)\n"
            "  --driver PATH    the test driver (default: the one built with this tree)\n"
            "  --front-end PATH liblivetrack_ze.so (default: the one built with this tree)\n"
            "  --help           this text\n",
            DEFAULT_ROUNDS, DEFAULT_SAMPLES, DEFAULT_ITERATIONS);
}

int main(int argc, char **argv)
{
    bench_name = "bench_levelzero";
    long rounds = DEFAULT_ROUNDS, samples = DEFAULT_SAMPLES, iterations = DEFAULT_ITERATIONS;
    const char *driver = BENCH_ZE_DRIVER, *front_end = BENCH_ZE_FRONT_END;
    int is_worker = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (!strcmp(option, "--help") || !strcmp(option, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(option, "--worker")) {
            is_worker = 1;
        } else if (i + 1 < argc && !strcmp(option, "--rounds")) {
            rounds = bench_parse_long(option, argv[++i], 1, 1000);
        } else if (i + 1 < argc && !strcmp(option, "--samples")) {
            samples = bench_parse_long(option, argv[++i], 1, 10000);
        } else if (i + 1 < argc && !strcmp(option, "--iterations")) {
            iterations = bench_parse_long(option, argv[++i], 1, 100000000);
        } else if (i + 1 < argc && !strcmp(option, "--driver")) {
            driver = argv[++i];
        } else if (i + 1 < argc && !strcmp(option, "--front-end")) {
            front_end = argv[++i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!*driver || access(driver, R_OK))
        bench_die("no test driver at \"%s\" (build the tests, or give --driver)", driver);
    if (!*front_end || access(front_end, R_OK))
        bench_die("no liblivetrack_ze.so at \"%s\" (give --front-end)", front_end);
    if (is_worker)
        return worker(samples, iterations, driver, front_end);

    char self[4096];
    bench_self_path(self, sizeof self);
    side_results sides[2];
    for (int with = 0; with < 2; with++) {
        sides[with].ns = calloc(LOOP_COUNT * (size_t)rounds, sizeof(double));
        sides[with].norm = calloc(LOOP_COUNT * (size_t)rounds, sizeof(double));
        if (!sides[with].ns || !sides[with].norm)
            bench_die("out of memory");
    }
    for (long round = 0; round < rounds; round++)
        for (int turn = 0; turn < 2; turn++) {
            int with = (int)((turn + round) % 2); /* alternate which side goes first */
            run_worker(self, driver, front_end, with, samples, iterations, round, rounds, &sides[with]);
        }
    printf("bench_levelzero: %ld rounds x %ld samples x %ld iterations through the loader and the test driver; "
           "ns per iteration, medians\n",
           rounds, samples, iterations);
    for (size_t l = 0; l < LOOP_COUNT; l++) {
        double without = median(sides[0].ns + l * (size_t)rounds, (size_t)rounds);
        double with = median(sides[1].ns + l * (size_t)rounds, (size_t)rounds);
        double norm_without = median(sides[0].norm + l * (size_t)rounds, (size_t)rounds);
        double norm_with = median(sides[1].norm + l * (size_t)rounds, (size_t)rounds);
        printf("bench_levelzero: %-44s without %8.1f ns  with %8.1f ns  ratio %5.2f  norm %5.2f\n", loops[l].calls,
               without, with, with / without, norm_with / norm_without);
    }
    for (int with = 0; with < 2; with++) {
        free(sides[with].ns);
        free(sides[with].norm);
    }
    return 0;
}
