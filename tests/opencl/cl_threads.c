/*
 * Four threads create, retain and release buffers, sub-buffers and user
 * events on one shared context (tens of thousands of calls) while a fifth
 * thread runs Reports. Each worker keeps every KEEP_EVERY-th object; at
 * the end the registry holds exactly those (per type, and their bytes),
 * and after they are released it is back to where it started.
 *
 * Then threads set a completion callback on every command they enqueue
 * while pocl's threads run them (the layer's striped list of pending
 * callbacks, wrap_callbacks.c): each callback runs exactly once, and
 * under ASan nothing leaks, not even the records of callbacks that never
 * run.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "cl_test_util.h"

enum { THREADS = 4, ITERATIONS = 3000, KEEP_EVERY = 100, KEPT = ITERATIONS / KEEP_EVERY };

typedef struct worker {
    int id;
    cl_context context;
    cl_mem kept_buffers[KEPT];
    cl_event kept_events[KEPT];
    uint64_t kept_bytes;
    int errors;
} worker;

static atomic_int workers_done;
static atomic_int reports_finished; /* by report_loop; no worker ends before one */
static atomic_int callback_inside;
static atomic_int callback_overlaps;
static atomic_int callback_bad_names;
static atomic_int callback_zero_counts; /* a count of 0: an object already released */

static size_t buffer_size(int id, int i) { return 16 + (size_t)((id * 7 + i) % 200); }

static void *work(void *arg)
{
    worker *w = arg;
    cl_int err = CL_SUCCESS;
    int kept = 0;
    for (int i = 0; i < ITERATIONS; i++) {
        size_t size = buffer_size(w->id, i);
        cl_mem buffer = clCreateBuffer(w->context, CL_MEM_READ_WRITE, size, NULL, &err);
        if (!buffer || err != CL_SUCCESS) {
            w->errors++;
            continue;
        }
        w->errors += clRetainMemObject(buffer) != CL_SUCCESS;
        if (i % 3 == 0) {
            cl_buffer_region region = {0, 16};
            cl_mem sub = clCreateSubBuffer(buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
            if (!sub || err != CL_SUCCESS)
                w->errors++;
            else
                w->errors += clReleaseMemObject(sub) != CL_SUCCESS;
        }
        w->errors += clReleaseMemObject(buffer) != CL_SUCCESS;

        cl_event event = clCreateUserEvent(w->context, &err);
        if (!event || err != CL_SUCCESS) {
            w->errors++;
            clReleaseMemObject(buffer);
            continue;
        }
        w->errors += clRetainEvent(event) != CL_SUCCESS;
        w->errors += clSetUserEventStatus(event, CL_COMPLETE) != CL_SUCCESS;
        w->errors += clReleaseEvent(event) != CL_SUCCESS;

        if (i % KEEP_EVERY == 0 && kept < KEPT) {
            w->kept_buffers[kept] = buffer;
            w->kept_events[kept] = event;
            w->kept_bytes += size;
            kept++;
        } else {
            w->errors += clReleaseMemObject(buffer) != CL_SUCCESS;
            w->errors += clReleaseEvent(event) != CL_SUCCESS;
        }
    }
    if (kept != KEPT)
        w->errors++;
    /* On a loaded host the reporter may not have run yet: a report must
     * overlap the work, so the work is not over until one has ended. */
    while (!atomic_load(&reports_finished))
        sched_yield();
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

static void CL_CALLBACK count_fn(void *user_data, void *object, const char *type_name, cl_uint refcount)
{
    (void)refcount;
    if (atomic_fetch_add(&callback_inside, 1) != 0)
        atomic_fetch_add(&callback_overlaps, 1);
    if (!object || !type_name || strncmp(type_name, "cl_", 3) != 0)
        atomic_fetch_add(&callback_bad_names, 1);
    if (refcount == 0)
        atomic_fetch_add(&callback_zero_counts, 1);
    (*(size_t *)user_data)++;
    atomic_fetch_sub(&callback_inside, 1);
}

typedef struct reporter {
    ct_ext *ext;
    cl_platform_id platform;
    size_t reports, objects;
} reporter;

static void *report_loop(void *arg)
{
    reporter *r = arg;
    while (atomic_load(&workers_done) < THREADS) {
        r->ext->report(r->platform, count_fn, &r->objects);
        r->reports++;
        atomic_store(&reports_finished, 1);
    }
    return NULL;
}

enum { RACERS = 3 };
#define RACE_NS 1500000000L /* 1.5 s */

static atomic_int race_stop;

typedef struct racer_state {
    cl_context context;
    size_t made;
    int errors;
} racer_state;

static void *race_events(void *arg)
{
    racer_state *r = arg;
    while (!atomic_load(&race_stop)) {
        cl_event batch[16];
        cl_int err = CL_SUCCESS;
        for (int i = 0; i < 16; i++) {
            batch[i] = clCreateUserEvent(r->context, &err);
            if (!batch[i] || err != CL_SUCCESS) {
                r->errors++;
                batch[i] = NULL;
            }
        }
        for (int i = 0; i < 16; i++) {
            if (!batch[i])
                continue;
            r->errors += clSetUserEventStatus(batch[i], CL_COMPLETE) != CL_SUCCESS;
            r->errors += clReleaseEvent(batch[i]) != CL_SUCCESS;
            r->made++;
        }
    }
    return NULL;
}

enum { SETTERS = 4, CALLBACKS_PER_SETTER = 2000, ORPHANS_PER_SETTER = 3 };

static atomic_int callback_runs[SETTERS][CALLBACKS_PER_SETTER];
static atomic_int callbacks_run_total;
static atomic_int orphan_callbacks_run;

static void CL_CALLBACK count_run(cl_event event, cl_int status, void *slot)
{
    (void)event, (void)status;
    atomic_fetch_add((atomic_int *)slot, 1);
    atomic_fetch_add(&callbacks_run_total, 1);
}

typedef struct setter_state {
    int id;
    cl_context context;
    cl_command_queue queue;
    int errors;
} setter_state;

/* Mostly markers, whose callbacks pocl runs on a thread of its own; every
 * eighth a user event completed here, whose callback may run right here. */
static void *set_callbacks(void *arg)
{
    setter_state *s = arg;
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < CALLBACKS_PER_SETTER; i++) {
        cl_event event = NULL;
        int user = i % 8 == 7;
        if (user)
            event = clCreateUserEvent(s->context, &err);
        else
            err = clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &event);
        if (!event || err != CL_SUCCESS) {
            s->errors++;
            continue;
        }
        s->errors += clSetEventCallback(event, CL_COMPLETE, count_run, &callback_runs[s->id][i]) != CL_SUCCESS;
        if (user)
            s->errors += clSetUserEventStatus(event, CL_COMPLETE) != CL_SUCCESS;
        s->errors += clReleaseEvent(event) != CL_SUCCESS;
        if (i % 500 == 499)
            s->errors += clFlush(s->queue) != CL_SUCCESS;
    }
    /* Released with no status: pocl frees them, and their callbacks never run. */
    for (int i = 0; i < ORPHANS_PER_SETTER; i++) {
        cl_event orphan = clCreateUserEvent(s->context, &err);
        if (!orphan || err != CL_SUCCESS) {
            s->errors++;
            continue;
        }
        s->errors += clSetEventCallback(orphan, CL_COMPLETE, count_run, &orphan_callbacks_run) != CL_SUCCESS;
        s->errors += clReleaseEvent(orphan) != CL_SUCCESS;
    }
    return NULL;
}

static void check_callbacks_from_threads(ct_env *env)
{
    pthread_t setters[SETTERS];
    setter_state states[SETTERS];
    for (int t = 0; t < SETTERS; t++) {
        states[t] = (setter_state){t, env->context, env->queue, 0};
        CHECK_EQ_INT(pthread_create(&setters[t], NULL, set_callbacks, &states[t]), 0);
    }
    for (int t = 0; t < SETTERS; t++) {
        pthread_join(setters[t], NULL);
        CHECK_EQ_INT(states[t].errors, 0);
    }
    ct_quiesce(env);
    for (int waited_ms = 0; atomic_load(&callbacks_run_total) < SETTERS * CALLBACKS_PER_SETTER && waited_ms < 10000;
         waited_ms++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    printf("%d callbacks set from %d threads ran\n", atomic_load(&callbacks_run_total), SETTERS);
    CHECK_EQ_INT(atomic_load(&callbacks_run_total), SETTERS * CALLBACKS_PER_SETTER);
    int not_once = 0;
    for (int t = 0; t < SETTERS; t++)
        for (int i = 0; i < CALLBACKS_PER_SETTER; i++)
            not_once += atomic_load(&callback_runs[t][i]) != 1;
    CHECK_EQ_INT(not_once, 0);
    CHECK_EQ_INT(atomic_load(&orphan_callbacks_run), 0);
}

int main(void)
{
    ct_env env;
    ct_setup(&env);
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    ext.track(env.platform);

    size_t start_all = ct_registry_count(NULL);
    size_t start_mem = ct_registry_count("cl_mem");
    size_t start_event = ct_registry_count("cl_event");
    livetrack_stats start;
    livetrack_get_stats(&start);

    static worker workers[THREADS];
    pthread_t threads[THREADS], report_thread;
    reporter r = {&ext, env.platform, 0, 0};
    CHECK_EQ_INT(pthread_create(&report_thread, NULL, report_loop, &r), 0);
    for (int t = 0; t < THREADS; t++) {
        workers[t].id = t;
        workers[t].context = env.context;
        CHECK_EQ_INT(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
    }
    uint64_t kept_bytes = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK_EQ_INT(workers[t].errors, 0);
        kept_bytes += workers[t].kept_bytes;
    }
    pthread_join(report_thread, NULL);
    printf("%zu reports (%zu objects reported) ran during the work\n", r.reports, r.objects);
    CHECK(r.reports > 0);
    CHECK_EQ_INT(atomic_load(&callback_overlaps), 0);
    CHECK_EQ_INT(atomic_load(&callback_bad_names), 0);
    CHECK_EQ_INT(atomic_load(&callback_zero_counts), 0);

    /* Exactly the kept objects are left. */
    CHECK_EQ_INT(ct_registry_count("cl_mem"), start_mem + THREADS * KEPT);
    CHECK_EQ_INT(ct_registry_count("cl_event"), start_event + THREADS * KEPT);
    CHECK_EQ_INT(ct_registry_count(NULL), start_all + 2 * THREADS * KEPT);
    livetrack_stats middle;
    livetrack_get_stats(&middle);
    CHECK_EQ_INT(middle.live_objects, start.live_objects + 2 * THREADS * KEPT);
    CHECK_EQ_INT(middle.live_bytes, start.live_bytes + kept_bytes);
    CHECK_EQ_INT(middle.misuse, start.misuse);
    /* Each worker did 2 or 3 creations per iteration. */
    uint64_t expected_created = 0;
    for (int i = 0; i < ITERATIONS; i++)
        expected_created += i % 3 == 0 ? 3 : 2;
    CHECK_EQ_INT(middle.created, start.created + THREADS * expected_created);

    /* The report agrees, and holds each kept object once with refs 1. */
    ct_report report = {0};
    ct_collect(ext.report, env.platform, &report);
    CHECK_EQ_INT(report.count, start_all + 2 * THREADS * KEPT);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_mem"), start_mem + THREADS * KEPT);
    CHECK_EQ_INT(ct_report_count_type(&report, "cl_event"), start_event + THREADS * KEPT);
    for (int t = 0; t < THREADS; t++) {
        for (int k = 0; k < KEPT; k++) {
            CT_EXPECT_LIVE(workers[t].kept_buffers[k], "cl_mem", 1);
            CT_EXPECT_LIVE(workers[t].kept_events[k], "cl_event", 1);
            livetrack_object obj;
            if (ct_live(workers[t].kept_buffers[k], &obj))
                CHECK_EQ_INT(obj.bytes, buffer_size(t, k * KEEP_EVERY));
        }
    }
    livetrack_object ctx;
    if (ct_live(env.context, &ctx))
        CHECK_EQ_INT(ctx.holders, 1 + 2 * THREADS * KEPT); /* the queue, the buffers, the events */

    /* Release them (from the threads that did not create them). */
    for (int t = 0; t < THREADS; t++) {
        for (int k = 0; k < KEPT; k++) {
            CHECK_EQ_INT(clReleaseMemObject(workers[(t + 1) % THREADS].kept_buffers[k]), CL_SUCCESS);
            CHECK_EQ_INT(clReleaseEvent(workers[(t + 1) % THREADS].kept_events[k]), CL_SUCCESS);
        }
    }
    livetrack_stats end;
    livetrack_get_stats(&end);
    CHECK_EQ_INT(end.live_objects, start.live_objects);
    CHECK_EQ_INT(end.live_bytes, start.live_bytes);
    CHECK_EQ_INT(ct_registry_count(NULL), start_all);
    ct_collect(ext.report, env.platform, &report);
    CHECK_EQ_INT(report.count, start_all);
    ct_report_free(&report);

    /* ---- Reports racing releases ----
     * Three threads create and release user events as fast as they can
     * while the main thread reports. A Report must never touch an object
     * after the program released it (the driver may have freed it): the
     * refcount it passes comes from the driver, so the layer has to keep
     * the object alive (or the release waiting) while it asks. */
    atomic_store(&workers_done, 0);
    atomic_store(&race_stop, 0);
    pthread_t racers[RACERS];
    racer_state racer_states[RACERS];
    for (int t = 0; t < RACERS; t++) {
        racer_states[t] = (racer_state){env.context, 0, 0};
        CHECK_EQ_INT(pthread_create(&racers[t], NULL, race_events, &racer_states[t]), 0);
    }
    size_t race_reports = 0, race_objects = 0;
    struct timespec start_time, now_time;
    clock_gettime(CLOCK_MONOTONIC, &start_time);
    do {
        ext.report(env.platform, count_fn, &race_objects);
        race_reports++;
        clock_gettime(CLOCK_MONOTONIC, &now_time);
    } while ((now_time.tv_sec - start_time.tv_sec) * 1000000000L + (now_time.tv_nsec - start_time.tv_nsec) <
             RACE_NS);
    atomic_store(&race_stop, 1);
    size_t race_events_made = 0;
    for (int t = 0; t < RACERS; t++) {
        pthread_join(racers[t], NULL);
        CHECK_EQ_INT(racer_states[t].errors, 0);
        race_events_made += racer_states[t].made;
    }
    printf("%zu reports raced %zu event create/release pairs\n", race_reports, race_events_made);
    CHECK_EQ_INT(atomic_load(&callback_overlaps), 0);
    /* and listed none the program had released by the time it asked */
    CHECK_EQ_INT(atomic_load(&callback_zero_counts), 0);
    CHECK_EQ_INT(ct_registry_count(NULL), start_all);

    /* ---- Callbacks set from many threads ---- */
    check_callbacks_from_threads(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), start_all);

    ct_teardown(&env);
    CHECK_EQ_INT(ct_registry_count(NULL), 0);
    ct_check_model(0);
    return check_summary("cl_threads");
}
