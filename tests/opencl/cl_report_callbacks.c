/*
 * What a Report callback may do: release the reported object, release
 * objects not reported yet (they are then skipped: never reported after
 * their release), retain objects, create objects, call the driver. None
 * of it may deadlock or crash, and calls of one report never overlap. A
 * report on another thread while a callback runs, which that callback may
 * wait for, goes on at once; so does one in a child forked then. A
 * context's destructor callback may report, or wait for a report on
 * another thread, even one already in flight when the callback starts.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buffer_made_in_callback.h"
#include "cl_test_util.h"

static const char *kernel_source = "__kernel void k(__global int *a) { a[0] = 2; }\n";

enum { COUNT = 10 };

typedef struct callback_state {
    void *targets[COUNT];     /* objects the test cares about */
    int seen[COUNT];          /* times each was reported */
    int released[COUNT];      /* released by the callback */
    size_t calls;
    size_t dead_reported;     /* reported while not live in the registry */
    int inside, nested;
    cl_context context;
    cl_event created[3];
    size_t created_count;
    cl_program program;       /* for the kernel case */
    int program_seen;
} callback_state;

static int target_index(const callback_state *state, const void *object)
{
    for (int i = 0; i < COUNT; i++)
        if (state->targets[i] && state->targets[i] == object)
            return i;
    return -1;
}

/* Common bookkeeping: counts, overlap, and "reported while dead". */
static int enter(callback_state *state, void *object)
{
    if (state->inside++)
        state->nested++;
    state->calls++;
    if (!ct_live(object, NULL)) {
        state->dead_reported++;
        fprintf(stderr, "  reported %p, which is not live\n", object);
    }
    int index = target_index(state, object);
    if (index >= 0)
        state->seen[index]++;
    return index;
}

static void leave(callback_state *state) { state->inside--; }

/* Releases each reported target (a user event). */
static void CL_CALLBACK release_reported(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    callback_state *state = user_data;
    (void)refcount;
    int index = enter(state, object);
    if (index >= 0) {
        CHECK(strcmp(type_name, "cl_event") == 0);
        CHECK_EQ_INT(clReleaseEvent((cl_event)object), CL_SUCCESS);
        state->released[index] = 1;
        CHECK(!ct_live(object, NULL));
    }
    leave(state);
}

/* On the newest target, releases the five oldest targets (not reported
 * yet). */
static void CL_CALLBACK release_older(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    callback_state *state = user_data;
    (void)type_name;
    (void)refcount;
    int index = enter(state, object);
    if (index == COUNT - 1) {
        for (int i = 0; i < 5; i++) {
            CHECK_EQ_INT(clReleaseMemObject((cl_mem)state->targets[i]), CL_SUCCESS);
            state->released[i] = 1;
        }
    }
    leave(state);
}

/* Retains each target and queries it through the driver. */
static void CL_CALLBACK retain_reported(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    callback_state *state = user_data;
    int index = enter(state, object);
    if (index >= 0) {
        CHECK_EQ_INT(clRetainMemObject((cl_mem)object), CL_SUCCESS);
        cl_uint driver = 0;
        CHECK_EQ_INT(clGetMemObjectInfo((cl_mem)object, CL_MEM_REFERENCE_COUNT, sizeof driver, &driver, NULL),
                     CL_SUCCESS);
        CHECK_EQ_INT(driver, refcount + 1);
        CHECK(strcmp(type_name, "cl_mem") == 0);
    }
    leave(state);
}

/* Creates user events on the first three calls. */
static void CL_CALLBACK create_objects(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    callback_state *state = user_data;
    (void)type_name;
    (void)refcount;
    enter(state, object);
    if (state->created_count < 3) {
        cl_int err = CL_SUCCESS;
        cl_event event = clCreateUserEvent(state->context, &err);
        CHECK(event != NULL && err == CL_SUCCESS);
        if (event) {
            CT_EXPECT_LIVE(event, "cl_event", 1);
            state->created[state->created_count++] = event;
        }
    }
    leave(state);
}

/* Releases the kernel, the last holder of an app-released program that
 * is older (not reported yet): the program must not be reported. */
static void CL_CALLBACK release_last_holder(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    callback_state *state = user_data;
    (void)refcount;
    int index = enter(state, object);
    if (index >= 0) {
        CHECK(strcmp(type_name, "cl_kernel") == 0);
        CHECK_EQ_INT(clReleaseKernel((cl_kernel)object), CL_SUCCESS);
        state->released[index] = 1;
        CHECK(!ct_live(state->program, NULL));
    }
    if (object == (void *)state->program)
        state->program_seen++;
    leave(state);
}

/* A report that waits inside its first callback until told to go on. */
static struct {
    clReportLiveObjectsIntelFPGA_fn report;
    cl_platform_id platform;
    atomic_int inside, release;
} fork_case;

static void CL_CALLBACK wait_inside(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    (void)user_data, (void)object, (void)type_name, (void)refcount;
    atomic_store(&fork_case.inside, 1);
    while (!atomic_load(&fork_case.release))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void *report_slowly(void *unused)
{
    (void)unused;
    fork_case.report(fork_case.platform, wait_inside, NULL);
    return NULL;
}

static void CL_CALLBACK count_reported(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    (void)object, (void)type_name, (void)refcount;
    (*(int *)user_data)++;
}

static void *report_and_count(void *reported)
{
    fork_case.report(fork_case.platform, count_reported, reported);
    return NULL;
}

static void CL_CALLBACK report_in_destructor(cl_context context, void *reported)
{
    (void)context;
    fork_case.report(fork_case.platform, count_reported, reported);
}

static void *report_and_count_thread(void *reported)
{
    fork_case.report(fork_case.platform, count_reported, reported);
    return NULL;
}

/* A destructor callback that waits for another thread's report: the
 * driver's lock it runs under must not hold that report up either. */
static void CL_CALLBACK wait_for_report_in_destructor(cl_context context, void *reported)
{
    (void)context;
    pthread_t reporter;
    if (pthread_create(&reporter, NULL, report_and_count_thread, reported) == 0)
        pthread_join(reporter, NULL);
}

/* Makes a context and releases it: its destructor callback reports, on
 * this thread or (`on_other_thread`) on one it waits for. */
static void *release_context_reporting(void *reported, int on_other_thread)
{
    cl_device_id device;
    cl_int err = clGetDeviceIDs(fork_case.platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    cl_context doomed = err == CL_SUCCESS ? clCreateContext(NULL, 1, &device, NULL, NULL, &err) : NULL;
    if (!doomed || clSetContextDestructorCallback(doomed,
                                                  on_other_thread ? wait_for_report_in_destructor
                                                                  : report_in_destructor,
                                                  reported) != CL_SUCCESS)
        return (void *)1;
    return clReleaseContext(doomed) == CL_SUCCESS ? NULL : (void *)1;
}

static void *release_waiting_context(void *reported) { return release_context_reporting(reported, 1); }

/* Makes a context and releases it: its destructor callback reports. */
static void *release_reporting_context(void *reported) { return release_context_reporting(reported, 0); }

/* A report already asking the driver when a context's destructor callback
 * starts on another thread, and that callback waits for it: pocl 3.1 runs
 * the callback under a lock that releasing a context waits for, so the
 * report must not release anything (a reference of its own, taken to ask). */
enum { IN_FLIGHT_CONTEXTS = 40, IN_FLIGHT_ROUNDS = 100, IN_FLIGHT_WAIT_S = 5 };

static struct {
    atomic_long reports; /* finished by the reporting thread */
    atomic_int stop, timed_out;
} in_flight;

static void *report_until_stopped(void *unused)
{
    (void)unused;
    int reported = 0;
    while (!atomic_load(&in_flight.stop)) {
        fork_case.report(fork_case.platform, count_reported, &reported);
        atomic_fetch_add(&in_flight.reports, 1);
    }
    return NULL;
}

/* Waits until the reporting thread has finished the report it may be in
 * and a whole one after it. Gives up after IN_FLIGHT_WAIT_S: the report
 * then waits for this callback, which marks the hang and returns, so the
 * driver's lock is let go and the test fails instead of hanging. */
static void CL_CALLBACK wait_for_reports_in_flight(cl_context context, void *unused)
{
    (void)context, (void)unused;
    long first = atomic_load(&in_flight.reports);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (atomic_load(&in_flight.reports) < first + 2) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited_s = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (waited_s >= IN_FLIGHT_WAIT_S) {
            atomic_store(&in_flight.timed_out, 1);
            return;
        }
        sched_yield();
    }
}

/* Many live contexts make the reporting thread spend its reports asking
 * about contexts, so a round's callback starts while one is being asked
 * about: a report that took and dropped a reference of its own to ask
 * hung within the first rounds. */
static void report_in_flight_during_destructors(cl_device_id device)
{
    cl_context live[IN_FLIGHT_CONTEXTS];
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < IN_FLIGHT_CONTEXTS; i++) {
        live[i] = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        CT_NEED(live[i], err);
    }
    pthread_t reporter;
    CHECK_EQ_INT(pthread_create(&reporter, NULL, report_until_stopped, NULL), 0);
    for (int round = 0; round < IN_FLIGHT_ROUNDS && !atomic_load(&in_flight.timed_out); round++) {
        cl_context doomed = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        CT_NEED(doomed, err);
        CT_OK(clSetContextDestructorCallback(doomed, wait_for_reports_in_flight, NULL));
        CT_OK(clReleaseContext(doomed));
    }
    atomic_store(&in_flight.stop, 1);
    pthread_join(reporter, NULL); /* never stuck: a timed-out callback has returned */
    if (atomic_load(&in_flight.timed_out))
        fprintf(stderr, "a context destructor callback waited %d s for a report in flight on another thread\n",
                IN_FLIGHT_WAIT_S);
    CHECK(!atomic_load(&in_flight.timed_out));
    CHECK(atomic_load(&in_flight.reports) >= 2);
    for (int i = 0; i < IN_FLIGHT_CONTEXTS; i++)
        CT_OK(clReleaseContext(live[i]));
}

/* Joins `thread` within 10 s; 0 when it is still running. */
static int joined_in_time(pthread_t thread, void **result)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    return pthread_timedjoin_np(thread, result, &deadline) == 0;
}

static void reset(callback_state *state, cl_context context)
{
    memset(state, 0, sizeof *state);
    state->context = context;
}

int main(void)
{
    ct_env env;
    ct_setup(&env);
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ext.track(env.platform);
    cl_int err = CL_SUCCESS;
    uint64_t live_at_start = ct_live_count();
    callback_state state;

    /* ---- the callback releases each reported event ---- */
    reset(&state, env.context);
    for (int i = 0; i < COUNT; i++) {
        cl_event event = clCreateUserEvent(env.context, &err);
        CT_NEED(event, err);
        CT_OK(clSetUserEventStatus(event, CL_COMPLETE));
        state.targets[i] = event;
    }
    size_t expected_calls = ct_registry_count(NULL);
    ext.report(env.platform, release_reported, &state);
    CHECK_EQ_INT(state.calls, expected_calls);
    CHECK_EQ_INT(state.nested, 0);
    CHECK_EQ_INT(state.dead_reported, 0);
    for (int i = 0; i < COUNT; i++) {
        CHECK_EQ_INT(state.seen[i], 1);
        CHECK(state.released[i]);
        CT_EXPECT_GONE(state.targets[i]);
    }
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- the callback releases objects not reported yet ---- */
    reset(&state, env.context);
    for (int i = 0; i < COUNT; i++) {
        cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 32 + (size_t)i, NULL, &err);
        CT_NEED(buffer, err);
        state.targets[i] = buffer;
    }
    expected_calls = ct_registry_count(NULL) - 5;
    ext.report(env.platform, release_older, &state);
    CHECK_EQ_INT(state.calls, expected_calls);
    CHECK_EQ_INT(state.nested, 0);
    CHECK_EQ_INT(state.dead_reported, 0);
    for (int i = 0; i < COUNT; i++) {
        CHECK_EQ_INT(state.seen[i], i < 5 ? 0 : 1);
        if (i < 5) {
            CT_EXPECT_GONE(state.targets[i]);
        } else {
            CT_EXPECT_LIVE(state.targets[i], "cl_mem", 1);
            CHECK_EQ_INT(clReleaseMemObject((cl_mem)state.targets[i]), CL_SUCCESS);
        }
    }
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- the callback retains and queries ---- */
    reset(&state, env.context);
    for (int i = 0; i < 3; i++) {
        cl_mem buffer = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
        CT_NEED(buffer, err);
        state.targets[i] = buffer;
    }
    ext.report(env.platform, retain_reported, &state);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(state.seen[i], 1);
        CT_EXPECT_LIVE(state.targets[i], "cl_mem", 2);
        CHECK_EQ_INT(clReleaseMemObject((cl_mem)state.targets[i]), CL_SUCCESS);
        CHECK_EQ_INT(clReleaseMemObject((cl_mem)state.targets[i]), CL_SUCCESS);
        CT_EXPECT_GONE(state.targets[i]);
    }

    /* ---- the callback creates objects ---- */
    reset(&state, env.context);
    cl_mem anchor = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    CT_NEED(anchor, err);
    expected_calls = ct_registry_count(NULL);
    ext.report(env.platform, create_objects, &state);
    CHECK_EQ_INT(state.created_count, 3);
    CHECK_EQ_INT(state.nested, 0);
    CHECK_EQ_INT(state.dead_reported, 0);
    /* The report covers at least what was live when it started; objects
     * created during it may or may not appear. */
    CHECK(state.calls >= expected_calls);
    CHECK(state.calls <= expected_calls + 3);
    for (size_t i = 0; i < state.created_count; i++) {
        CT_EXPECT_LIVE(state.created[i], "cl_event", 1);
        CHECK_EQ_INT(clReleaseEvent(state.created[i]), CL_SUCCESS);
    }
    /* A second report sees nothing created (the callback stops at 3)... */
    state.created_count = 3;
    state.calls = 0;
    ext.report(env.platform, create_objects, &state);
    CHECK_EQ_INT(state.calls, expected_calls);
    CHECK_EQ_INT(clReleaseMemObject(anchor), CL_SUCCESS);
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- the callback releases the last holder of an older object ---- */
    reset(&state, env.context);
    cl_program program = ct_build(&env, kernel_source);
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    CT_NEED(kernel, err);
    CT_OK(clReleaseProgram(program)); /* kept alive by the kernel */
    CHECK(ct_live(program, NULL));
    state.program = program;
    state.targets[0] = kernel;
    ext.report(env.platform, release_last_holder, &state);
    CHECK_EQ_INT(state.seen[0], 1);
    CHECK(state.released[0]);
    CHECK_EQ_INT(state.program_seen, 0);
    CHECK_EQ_INT(state.dead_reported, 0);
    CT_EXPECT_GONE(kernel);
    CT_EXPECT_GONE(program);
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- the Altera entry point with a releasing callback ---- */
    reset(&state, env.context);
    for (int i = 0; i < COUNT; i++) {
        cl_event event = clCreateUserEvent(env.context, &err);
        CT_NEED(event, err);
        CT_OK(clSetUserEventStatus(event, CL_COMPLETE));
        state.targets[i] = event;
    }
    ext.report_altera(env.platform, release_reported, &state);
    for (int i = 0; i < COUNT; i++) {
        CHECK_EQ_INT(state.seen[i], 1);
        CT_EXPECT_GONE(state.targets[i]);
    }
    CHECK_EQ_INT(ct_live_count(), live_at_start);

    /* ---- a fork while another thread is inside a report ---- */
    /* The child has no such thread: its own report must not wait for it. */
    fork_case.report = ext.report;
    fork_case.platform = env.platform;
    pthread_t reporter;
    CHECK_EQ_INT(pthread_create(&reporter, NULL, report_slowly, NULL), 0);
    while (!atomic_load(&fork_case.inside))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(10); /* a hang ends the child, and the test fails */
        int reported = 0;
        ext.report(env.platform, count_reported, &reported);
        _exit(reported > 0 ? 0 : 3);
    }
    int child_status = 0;
    CHECK(child > 0 && waitpid(child, &child_status, 0) == child);
    CHECK(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0);
    /* ---- a report on another thread meanwhile: a callback may wait for
     *      such a thread (join it, or wait for an event its work sets),
     *      so it must not wait for the report in progress ---- */
    int reported_meanwhile = 0;
    pthread_t other;
    CHECK_EQ_INT(pthread_create(&other, NULL, report_and_count, &reported_meanwhile), 0);
    int joined = joined_in_time(other, NULL);
    CHECK(joined); /* else it waits for the first report, which waits for us */
    CHECK(reported_meanwhile > 0);
    atomic_store(&fork_case.release, 1);
    pthread_join(reporter, NULL);
    if (!joined)
        pthread_join(other, NULL);

    /* ---- a buffer made inside an event callback, in the event's context
     *      that nothing else holds any more: the platform's report lists
     *      it, and the context it keeps alive ---- */
    {
        buffer_made_in_callback made_in_callback;
        CT_OK(buffer_made_in_callback_run(env.device, &made_in_callback));
        CHECK(atomic_load(&made_in_callback.done) && made_in_callback.buffer);
        if (made_in_callback.buffer) {
            ct_report listed = {0};
            ct_collect(ext.report, env.platform, &listed);
            CHECK(ct_report_find(&listed, made_in_callback.buffer) >= 0);
            CHECK(ct_report_find(&listed, made_in_callback.context) >= 0);
            ct_report_free(&listed);
            CT_OK(clReleaseMemObject(made_in_callback.buffer));
            ct_collect(ext.report, env.platform, &listed);
            CHECK(ct_report_find(&listed, made_in_callback.buffer) < 0);
            CHECK(ct_report_find(&listed, made_in_callback.context) < 0);
            ct_report_free(&listed);
        }
    }

    /* ---- a report inside a context's destructor callback, while other
     *      contexts live: pocl 3.1 runs it under a lock that releasing a
     *      context there waits for, so the report must not ---- */
    int reported_in_destructor = 0;
    void *failed = NULL;
    CHECK_EQ_INT(pthread_create(&other, NULL, release_reporting_context, &reported_in_destructor), 0);
    if (!joined_in_time(other, &failed)) {
        CHECK(0); /* hung: that thread holds the driver's lock, end here */
        check_summary("cl_report_callbacks");
        _exit(1);
    }
    CHECK(failed == NULL);
    CHECK(reported_in_destructor > 0);
    /* ... and on a thread that callback waits for */
    reported_in_destructor = 0;
    CHECK_EQ_INT(pthread_create(&other, NULL, release_waiting_context, &reported_in_destructor), 0);
    if (!joined_in_time(other, &failed)) {
        CHECK(0);
        check_summary("cl_report_callbacks");
        _exit(1);
    }
    CHECK(failed == NULL);
    CHECK(reported_in_destructor > 0);
    /* ... and one in flight when the callback starts, which it waits for */
    report_in_flight_during_destructors(env.device);

    ct_teardown(&env);
    ct_check_model(0);
    return check_summary("cl_report_callbacks");
}
