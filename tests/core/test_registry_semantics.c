/*
 * Directed tests of the registry's semantics: kept-alive objects,
 * keepers, recently released handles, VIA_FIRST_PARENT, stale replacement, bad
 * arguments, owners, bounded memory, a large snapshot's memory, and the
 * text of the leak report (written on demand and at exit).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "livetrack/livetrack.h"

enum { T_CTX, T_QUEUE, T_PROG, T_KERNEL, T_MEM, T_EVENT, T_COUNT };
static const char *const type_names[T_COUNT] = {"sem_ctx", "sem_queue", "sem_prog", "sem_kernel", "sem_mem", "sem_event"};
#define API_NAME "semtest"

static const char owner_a_tag = 'a', owner_b_tag = 'b', owner_c_tag = 'c';
#define OWNER_A ((const void *)&owner_a_tag)
#define OWNER_B ((const void *)&owner_b_tag)
#define OWNER_C ((const void *)&owner_c_tag)

/* Every section uses its own handle range and leaves nothing live. */
static uint64_t next_handle = 0x10000000;
static uint64_t new_handle(void)
{
    next_handle += 0x1040;
    return next_handle;
}

static livetrack_status create_full(uint64_t handle, unsigned type, uint64_t parent, uint64_t second, unsigned flags,
                                    uint64_t bytes, const void *owner)
{
    livetrack_new_object request;
    memset(&request, 0, sizeof request);
    request.domain = LIVETRACK_DOMAIN_USER;
    request.type = type;
    request.handle = handle;
    request.bytes = bytes;
    request.owner = owner;
    request.parent = parent;
    request.second_parent = second;
    request.flags = flags;
    return livetrack_create(&request);
}

static uint64_t make(unsigned type, uint64_t parent)
{
    uint64_t handle = new_handle();
    CHECK_EQ_INT(create_full(handle, type, parent, 0, 0, 0, NULL), LIVETRACK_OK);
    return handle;
}

static livetrack_status release(uint64_t handle)
{
    return livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, NULL);
}

static livetrack_object look(uint64_t handle)
{
    livetrack_object object;
    memset(&object, 0, sizeof object);
    CHECK_EQ_INT(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &object), LIVETRACK_OK);
    return object;
}

static int is_live(uint64_t handle) { return livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, NULL) == LIVETRACK_OK; }

/* refs and holders of a live object; failures name the caller's line */
#define check_counts(handle, refs, holders) check_counts_at(__LINE__, handle, refs, holders)
static void check_counts_at(int line, uint64_t handle, uint32_t refs, uint32_t holders)
{
    int failed = check_failed;
    livetrack_object object = look(handle);
    CHECK_EQ_INT(object.refs, refs);
    CHECK_EQ_INT(object.holders, holders);
    if (check_failed != failed)
        fprintf(stderr, "  (check_counts at line %d)\n", line);
}

static uint64_t live_objects(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.live_objects;
}

/* Index of `handle` in a snapshot, or -1. */
static long snapshot_index(const livetrack_snapshot *snapshot, uint64_t handle)
{
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++)
        if (livetrack_snapshot_at(snapshot, i)->handle == handle)
            return (long)i;
    return -1;
}

/* The snapshot's object with this creation number, -1: none. */
static long snapshot_index_of_seq(const livetrack_snapshot *snapshot, uint64_t seq)
{
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++)
        if (livetrack_snapshot_at(snapshot, i)->seq == seq)
            return (long)i;
    return -1;
}

/* The creation number of the parent `which` of a snapshot's object. */
static uint64_t snapshot_parent_seq(const livetrack_snapshot *snapshot, long index, int which)
{
    uint64_t seqs[2] = {~0ull, ~0ull};
    CHECK(index >= 0);
    if (index >= 0)
        CHECK_EQ_INT(livetrack_snapshot_parent_seqs(snapshot, (size_t)index, seqs), LIVETRACK_OK);
    return seqs[which];
}

/* ---- recently released ------------------------------------------------- */

static livetrack_status released_type(uint64_t handle, livetrack_type *type)
{
    *type = 99;
    return livetrack_released_type(LIVETRACK_DOMAIN_USER, handle, type);
}

static void test_released_type(void)
{
    livetrack_type type;
    uint64_t never = new_handle();
    CHECK_EQ_INT(released_type(never, &type), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(type, 99);

    /* live, then kept alive by a child: not released yet */
    uint64_t program = make(T_PROG, 0);
    uint64_t kernel = make(T_KERNEL, program);
    CHECK_EQ_INT(released_type(program, &type), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(program, &type), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(release(kernel), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(kernel, &type), LIVETRACK_OK);
    CHECK_EQ_INT(type, T_KERNEL);
    CHECK_EQ_INT(released_type(program, &type), LIVETRACK_OK);
    CHECK_EQ_INT(type, T_PROG);

    /* the handle comes back as another type: live again, then the newest
     * death answers */
    CHECK_EQ_INT(create_full(program, T_MEM, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(program, &type), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(program, &type), LIVETRACK_OK);
    CHECK_EQ_INT(type, T_MEM);

    /* destroyed (no reference count) counts as released too */
    uint64_t event = make(T_EVENT, 0);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_EVENT, event, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(event, &type), LIVETRACK_OK);
    CHECK_EQ_INT(type, T_EVENT);

    /* memory is bounded: 128 deaths per shard, so after 64 x 512 more the
     * old ones are forgotten (each shard gets ~512, never near 128) */
    for (int i = 0; i < 64 * 512; i++)
        CHECK_EQ_INT(release(make(T_MEM, 0)), LIVETRACK_OK);
    CHECK_EQ_INT(released_type(kernel, &type), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(released_type(event, &type), LIVETRACK_UNKNOWN);

    CHECK_EQ_INT(livetrack_released_type(LIVETRACK_DOMAIN_COUNT, kernel, &type), LIVETRACK_BAD_ARGUMENT);
    uint64_t buffer = make(T_MEM, 0);
    CHECK_EQ_INT(release(buffer), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_released_type(LIVETRACK_DOMAIN_USER, buffer, NULL), LIVETRACK_OK);
}

/* livetrack_released: a dead object's description, from which a release
 * the driver refused can be undone (livetrack_restore) without a lookup
 * taken before it. The owner comes back too: reports by owner (the
 * OpenCL extension's, by platform) list the object again. */
static void test_released_description(void)
{
    livetrack_object dead;
    uint64_t never = new_handle();
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, never, &dead), LIVETRACK_UNKNOWN);
    uint64_t context = make(T_CTX, 0);
    uint64_t buffer = new_handle();
    CHECK_EQ_INT(create_full(buffer, T_MEM, context, 0, 0, 4096, OWNER_A), LIVETRACK_OK);
    livetrack_object before = look(buffer);
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, buffer, &dead), LIVETRACK_UNKNOWN); /* live */
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_COUNT, buffer, &dead), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, buffer, NULL), LIVETRACK_BAD_ARGUMENT);

    CHECK_EQ_INT(release(buffer), LIVETRACK_OK);
    memset(&dead, 0xff, sizeof dead);
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, buffer, &dead), LIVETRACK_OK);
    CHECK_EQ_INT(dead.domain, LIVETRACK_DOMAIN_USER);
    CHECK_EQ_INT(dead.type, T_MEM);
    CHECK(dead.type_name && !strcmp(dead.type_name, "sem_mem"));
    CHECK_EQ_INT(dead.handle, buffer);
    CHECK_EQ_INT(dead.seq, before.seq);
    CHECK_EQ_INT(dead.bytes, 4096);
    CHECK_EQ_INT(dead.stack, before.stack);
    /* ticks to ns and back at the rate of the moment: within a microsecond */
    CHECK(dead.time_ns + 1000 > before.time_ns && dead.time_ns < before.time_ns + 1000);
    CHECK(dead.refs == 0 && dead.holders == 0 && dead.parents[0] == 0 && dead.parents[1] == 0);
    CHECK(dead.owner == OWNER_A);

    /* Put back from it: the same object, holding no parent. */
    uint64_t created = 0;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    created = stats.created;
    CHECK_EQ_INT(livetrack_restore(&dead, 1, NULL, "undo"), LIVETRACK_OK);
    livetrack_object back = look(buffer);
    CHECK_EQ_INT(back.seq, before.seq);
    CHECK_EQ_INT(back.refs, 1);
    CHECK_EQ_INT(back.bytes, 4096);
    CHECK_EQ_INT(back.stack, before.stack);
    CHECK_EQ_INT(back.parents[0], 0);
    CHECK(back.owner == OWNER_A);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.created, created);
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, buffer, &dead), LIVETRACK_UNKNOWN); /* live again */
    check_counts(context, 1, 0);
    CHECK_EQ_INT(release(buffer), LIVETRACK_OK);
    CHECK_EQ_INT(release(context), LIVETRACK_OK);
    CHECK(!is_live(buffer) && !is_live(context));
}

/* ---- kept alive ------------------------------------------------------------ */

static void test_kept_alive(void)
{
    uint64_t base = live_objects();
    uint64_t program = make(T_PROG, 0);
    uint64_t kernel = make(T_KERNEL, program);
    check_counts(program, 1, 1);
    check_counts(kernel, 1, 0);

    uint32_t left = 99;
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_PROG, program, &left, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(left, 0);

    /* still in the snapshot, with refs 0 and holders 1, after its child */
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    long p = snapshot_index(snapshot, program), k = snapshot_index(snapshot, kernel);
    CHECK(p >= 0 && k >= 0);
    if (p >= 0 && k >= 0) {
        CHECK(k < p); /* newest first */
        const livetrack_object *object = livetrack_snapshot_at(snapshot, (size_t)p);
        CHECK_EQ_INT(object->refs, 0);
        CHECK_EQ_INT(object->holders, 1);
        CHECK_EQ_INT(livetrack_snapshot_at(snapshot, (size_t)k)->parents[0], program);
        CHECK_EQ_INT(livetrack_snapshot_at(snapshot, (size_t)k)->parent_types[0], T_PROG);
    }
    livetrack_snapshot_free(snapshot);
    CHECK_EQ_INT(live_objects(), base + 2);

    /* the application holds nothing to release or destroy */
    left = 99;
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_PROG, program, &left, NULL), LIVETRACK_NOT_OWNED);
    CHECK_EQ_INT(left, 0);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_PROG, program, NULL), LIVETRACK_NOT_OWNED);
    check_counts(program, 0, 1);
    /* the type is still checked first */
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_KERNEL, program, NULL, NULL), LIVETRACK_WRONG_TYPE);

    /* it may be obtained again (CL_KERNEL_PROGRAM) */
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_PROG, program, NULL), LIVETRACK_OK);
    check_counts(program, 1, 1);
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_PROG, program, &left, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(left, 0);
    check_counts(program, 0, 1);

    /* the child going frees the chain */
    livetrack_object program_desc = look(program);
    CHECK(livetrack_still_live(&program_desc));
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_KERNEL, kernel, &left, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(left, 0);
    CHECK(!is_live(kernel));
    CHECK(!is_live(program));
    CHECK(!livetrack_still_live(&program_desc));
    CHECK_EQ_INT(release(program), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(live_objects(), base);

    /* a longer chain: ctx <- prog <- kernel, released top-down */
    uint64_t ctx = make(T_CTX, 0);
    program = make(T_PROG, ctx);
    kernel = make(T_KERNEL, program);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    check_counts(ctx, 0, 1);
    check_counts(program, 0, 1);
    CHECK_EQ_INT(live_objects(), base + 3);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_KERNEL, kernel, NULL), LIVETRACK_OK);
    CHECK(!is_live(ctx) && !is_live(program) && !is_live(kernel));
    CHECK_EQ_INT(live_objects(), base);

    /* refs counting: retain twice, destroy drops all of them */
    uint64_t mem = make(T_MEM, 0);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, mem, NULL), LIVETRACK_OK);
    check_counts(mem, 3, 0);
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, T_MEM, mem, &left, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(left, 2);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_CTX, mem, NULL), LIVETRACK_WRONG_TYPE);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_CTX, mem, NULL), LIVETRACK_WRONG_TYPE);
    check_counts(mem, 2, 0);
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_OK);
    CHECK(!is_live(mem));
    CHECK_EQ_INT(livetrack_destroy(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- keepers ------------------------------------------------------------------ */

static void test_keepers(void)
{
    uint64_t base = live_objects();
    /* nothing to keep: never created, a bad domain, released */
    CHECK(livetrack_keep_alive(LIVETRACK_DOMAIN_USER, new_handle()) == NULL);
    uint64_t gone = make(T_EVENT, 0);
    CHECK(livetrack_keep_alive(LIVETRACK_DOMAIN_ANY, gone) == NULL);
    CHECK(livetrack_keep_alive(LIVETRACK_DOMAIN_COUNT, gone) == NULL);
    CHECK_EQ_INT(release(gone), LIVETRACK_OK);
    CHECK(livetrack_keep_alive(LIVETRACK_DOMAIN_USER, gone) == NULL);
    livetrack_let_go(NULL);

    /* an event with two callbacks pending, released by the program: kept
     * alive, not the program's to release again, gone with the last */
    uint64_t queue = make(T_QUEUE, 0);
    uint64_t event = make(T_EVENT, queue);
    livetrack_keeper *first = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, event);
    livetrack_keeper *second = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, event);
    CHECK(first != NULL && second != NULL);
    check_counts(event, 1, 2);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    check_counts(event, 0, 2);
    CHECK_EQ_INT(release(event), LIVETRACK_NOT_OWNED);
    livetrack_type type;
    CHECK_EQ_INT(livetrack_live_type(LIVETRACK_DOMAIN_USER, event, &type), LIVETRACK_OK);
    CHECK_EQ_INT(type, T_EVENT);
    livetrack_let_go(first);
    check_counts(event, 0, 1);
    livetrack_let_go(second);
    CHECK(!is_live(event));
    CHECK_EQ_INT(released_type(event, &type), LIVETRACK_OK);
    check_counts(queue, 1, 0); /* the event's hold on its queue went with it */

    /* let go before the program's release: an ordinary object again */
    event = make(T_EVENT, queue);
    livetrack_let_go(livetrack_keep_alive(LIVETRACK_DOMAIN_USER, event));
    check_counts(event, 1, 0);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK(!is_live(event));
    CHECK_EQ_INT(release(queue), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- VIA_FIRST_PARENT, second parents ----------------------------------------- */

static void test_parents(void)
{
    uint64_t base = live_objects();
    uint64_t ctx = make(T_CTX, 0);
    uint64_t queue = make(T_QUEUE, ctx);
    uint64_t event = new_handle();
    CHECK_EQ_INT(create_full(event, T_EVENT, queue, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
    livetrack_object object = look(event);
    CHECK_EQ_INT(object.parents[0], ctx); /* held: the queue's context */
    CHECK_EQ_INT(object.parent_types[0], T_CTX);
    CHECK_EQ_INT(object.parents[1], 0);
    check_counts(ctx, 1, 2);  /* queue and event */
    check_counts(queue, 1, 0); /* the event does not hold the queue */

    /* the queue may go first: the event keeps only the context */
    CHECK_EQ_INT(release(queue), LIVETRACK_OK);
    CHECK(!is_live(queue));
    check_counts(ctx, 1, 1);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    check_counts(ctx, 0, 1);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK(!is_live(ctx));
    CHECK_EQ_INT(live_objects(), base);

    /* the grandparent stays alive through the event after ctx and queue
     * are released in the other order */
    ctx = make(T_CTX, 0);
    queue = make(T_QUEUE, ctx);
    event = new_handle();
    CHECK_EQ_INT(create_full(event, T_EVENT, queue, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    check_counts(ctx, 0, 2);
    CHECK_EQ_INT(release(queue), LIVETRACK_OK);
    check_counts(ctx, 0, 1);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK(!is_live(ctx) && !is_live(queue) && !is_live(event));

    /* VIA on a parent without a first parent holds nothing */
    queue = make(T_QUEUE, 0);
    event = new_handle();
    CHECK_EQ_INT(create_full(event, T_EVENT, queue, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
    object = look(event);
    CHECK_EQ_INT(object.parents[0], 0);
    check_counts(queue, 1, 0);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK_EQ_INT(release(queue), LIVETRACK_OK);

    /* a second parent (sub-buffer from a buffer), and the same object as both */
    ctx = make(T_CTX, 0);
    uint64_t buffer = make(T_MEM, ctx);
    uint64_t sub = new_handle();
    CHECK_EQ_INT(create_full(sub, T_MEM, ctx, buffer, 0, 64, NULL), LIVETRACK_OK);
    object = look(sub);
    CHECK_EQ_INT(object.parents[0], ctx);
    CHECK_EQ_INT(object.parents[1], buffer);
    CHECK_EQ_INT(object.parent_types[1], T_MEM);
    check_counts(ctx, 1, 2);
    check_counts(buffer, 1, 1);
    CHECK_EQ_INT(release(buffer), LIVETRACK_OK);
    check_counts(buffer, 0, 1);
    uint64_t twice = new_handle();
    CHECK_EQ_INT(create_full(twice, T_MEM, buffer, buffer, 0, 0, NULL), LIVETRACK_OK);
    check_counts(buffer, 0, 3); /* sub, and twice by twice */
    CHECK_EQ_INT(release(sub), LIVETRACK_OK);
    check_counts(buffer, 0, 2);
    CHECK_EQ_INT(release(twice), LIVETRACK_OK);
    CHECK(!is_live(buffer));
    check_counts(ctx, 1, 0);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);

    /* parents that are not live are ignored */
    uint64_t orphan = new_handle();
    CHECK_EQ_INT(create_full(orphan, T_MEM, 0xdead0000, 0xbeef0000, 0, 0, NULL), LIVETRACK_OK);
    object = look(orphan);
    CHECK_EQ_INT(object.parents[0], 0);
    CHECK_EQ_INT(object.parents[1], 0);
    CHECK_EQ_INT(release(orphan), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- stale replacement -------------------------------------------------------- */

static void test_replacement(void)
{
    uint64_t base = live_objects();
    livetrack_stats before, after;

    /* livetrack_destroy_object ends the very object described, not one
     * recorded at its handle since */
    {
        uint64_t handle = make(T_MEM, 0);
        livetrack_object first = look(handle);
        CHECK_EQ_INT(create_full(handle, T_MEM, 0, 0, 0, 0, NULL), LIVETRACK_OK); /* the address handed out again */
        livetrack_object second = look(handle);
        CHECK(second.seq != first.seq);
        CHECK_EQ_INT(livetrack_destroy_object(&first, "free"), LIVETRACK_UNKNOWN);
        CHECK(livetrack_still_live(&second));
        CHECK_EQ_INT(livetrack_destroy_object(&second, "free"), LIVETRACK_OK);
        CHECK(!livetrack_still_live(&second));
        CHECK_EQ_INT(livetrack_destroy_object(&second, "free"), LIVETRACK_UNKNOWN);
        CHECK_EQ_INT(livetrack_destroy_object(NULL, "free"), LIVETRACK_UNKNOWN);
        CHECK_EQ_INT(live_objects(), base);
    }

    /* an object no child holds: freed at once, its hold on its parent goes */
    uint64_t ctx = make(T_CTX, 0);
    uint64_t mem = make(T_MEM, ctx);
    livetrack_object old_desc = look(mem);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_OK);
    check_counts(ctx, 1, 1);
    livetrack_get_stats(&before);
    CHECK_EQ_INT(create_full(mem, T_QUEUE, 0, 0, 0, 10, NULL), LIVETRACK_OK);
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.replaced, before.replaced + 1);
    CHECK_EQ_INT(after.live_objects, before.live_objects);
    CHECK_EQ_INT(after.live_bytes, before.live_bytes + 10);
    check_counts(ctx, 1, 0);
    livetrack_object new_desc = look(mem);
    CHECK_EQ_INT(new_desc.type, T_QUEUE);
    CHECK_EQ_INT(new_desc.refs, 1); /* the old references are forgotten */
    CHECK(new_desc.seq > old_desc.seq);
    CHECK_EQ_INT(new_desc.parents[0], 0);
    CHECK(!livetrack_still_live(&old_desc));
    CHECK(livetrack_still_live(&new_desc));
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);
    CHECK(!is_live(mem));
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);

    /* an object children hold: its handle names the new object, but the
     * old one is kept (with its own hold on its parent) until the last
     * child goes, and snapshots still show it: released, kept alive by
     * the kernel, told from the new one by its creation number */
    ctx = make(T_CTX, 0);
    uint64_t program = make(T_PROG, ctx);
    uint64_t kernel = make(T_KERNEL, program);
    old_desc = look(program);
    CHECK_EQ_INT(create_full(program, T_PROG, ctx, 0, 0, 0, NULL), LIVETRACK_OK);
    check_counts(ctx, 1, 2); /* old program (replaced) and new program */
    new_desc = look(program);
    CHECK_EQ_INT(new_desc.refs, 1);
    CHECK_EQ_INT(new_desc.holders, 0); /* the kernel holds the old one */
    CHECK(!livetrack_still_live(&old_desc));
    CHECK_EQ_INT(live_objects(), base + 4);
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), base + 4);
    long at = snapshot_index_of_seq(snapshot, new_desc.seq);
    CHECK(at >= 0 && livetrack_snapshot_at(snapshot, (size_t)at)->refs == 1);
    at = snapshot_index_of_seq(snapshot, old_desc.seq);
    CHECK(at >= 0);
    if (at >= 0) {
        const livetrack_object *old_program = livetrack_snapshot_at(snapshot, (size_t)at);
        CHECK_EQ_INT(old_program->handle, program);
        CHECK_EQ_INT(old_program->refs, 0);
        CHECK_EQ_INT(old_program->holders, 1);
        CHECK_EQ_INT(old_program->parents[0], ctx);
        CHECK_EQ_INT(snapshot_parent_seq(snapshot, at, 0), look(ctx).seq);
    }
    at = snapshot_index(snapshot, kernel);
    CHECK(at >= 0 && livetrack_snapshot_at(snapshot, (size_t)at)->parents[0] == program);
    CHECK_EQ_INT(snapshot_parent_seq(snapshot, at, 0), old_desc.seq); /* not the new program's */
    CHECK_EQ_INT(snapshot_parent_seq(snapshot, at, 1), 0);
    uint64_t seqs[2];
    CHECK_EQ_INT(livetrack_snapshot_parent_seqs(snapshot, livetrack_snapshot_count(snapshot), seqs),
                 LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_snapshot_parent_seqs(NULL, 0, seqs), LIVETRACK_BAD_ARGUMENT);
    livetrack_snapshot_free(snapshot);
    /* a snapshot since a mark taken after the replacement: neither */
    uint64_t mark = livetrack_mark();
    snapshot = livetrack_snapshot_since(LIVETRACK_DOMAIN_USER, NULL, mark);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 0);
    livetrack_snapshot_free(snapshot);
    /* the new program goes; the old one is still held by the kernel */
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    CHECK(!is_live(program));
    check_counts(ctx, 1, 1);
    CHECK_EQ_INT(live_objects(), base + 3);
    livetrack_object gone;
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, program, &gone), LIVETRACK_OK);
    CHECK_EQ_INT(gone.seq, new_desc.seq);
    CHECK_EQ_INT(release(kernel), LIVETRACK_OK);
    check_counts(ctx, 1, 0); /* the replaced old program went with its kernel */
    CHECK_EQ_INT(live_objects(), base + 1);
    /* died last, but the newer program is still the handle's last release */
    CHECK_EQ_INT(livetrack_released(LIVETRACK_DOMAIN_USER, program, &gone), LIVETRACK_OK);
    CHECK_EQ_INT(gone.seq, new_desc.seq);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);

    /* children named after a replacement hold the new object, never the
     * hidden old one, even right after the same thread used the old one
     * as a parent */
    program = make(T_PROG, 0);
    kernel = make(T_KERNEL, program);
    CHECK_EQ_INT(create_full(program, T_MEM, 0, 0, 0, 0, NULL), LIVETRACK_OK); /* old held by kernel */
    uint64_t kernel2 = make(T_KERNEL, program);
    livetrack_object second = look(kernel2);
    CHECK_EQ_INT(second.parents[0], program);
    CHECK_EQ_INT(second.parent_types[0], T_MEM);
    check_counts(program, 1, 1);
    uint64_t event = new_handle();
    CHECK_EQ_INT(create_full(event, T_EVENT, kernel, program, 0, 0, NULL), LIVETRACK_OK);
    check_counts(program, 1, 2);
    check_counts(kernel, 1, 1);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    check_counts(program, 0, 1); /* kept alive by kernel2 */
    CHECK_EQ_INT(release(kernel2), LIVETRACK_OK);
    CHECK(!is_live(program));
    CHECK_EQ_INT(release(kernel), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);

    /* replacing a kept-alive object (refs 0, holders 1) */
    ctx = make(T_CTX, 0);
    program = make(T_PROG, ctx);
    kernel = make(T_KERNEL, program);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(program, T_PROG, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    check_counts(program, 1, 0);
    check_counts(ctx, 1, 1);
    CHECK_EQ_INT(release(kernel), LIVETRACK_OK);
    check_counts(ctx, 1, 0);
    check_counts(program, 1, 0);
    CHECK_EQ_INT(release(program), LIVETRACK_OK);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);

    /* the new object names the object it replaces as its parent */
    ctx = make(T_CTX, 0);
    mem = make(T_MEM, ctx);
    old_desc = look(mem);
    CHECK_EQ_INT(create_full(mem, T_MEM, mem, 0, 0, 0, NULL), LIVETRACK_OK);
    new_desc = look(mem);
    CHECK_EQ_INT(new_desc.parents[0], mem); /* the replaced old one */
    CHECK_EQ_INT(new_desc.refs, 1);
    CHECK_EQ_INT(new_desc.holders, 0);
    check_counts(ctx, 1, 1);
    CHECK_EQ_INT(live_objects(), base + 3); /* the old one, kept alive by the new one */
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    at = snapshot_index_of_seq(snapshot, new_desc.seq);
    CHECK_EQ_INT(snapshot_parent_seq(snapshot, at, 0), old_desc.seq);
    at = snapshot_index_of_seq(snapshot, old_desc.seq);
    CHECK(at >= 0 && livetrack_snapshot_at(snapshot, (size_t)at)->refs == 0 &&
          livetrack_snapshot_at(snapshot, (size_t)at)->holders == 1);
    livetrack_snapshot_free(snapshot);
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);
    CHECK(!is_live(mem));
    check_counts(ctx, 1, 0);
    CHECK_EQ_INT(release(mem), LIVETRACK_UNKNOWN);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- bad arguments ------------------------------------------------------------ */

/* A front end recording anew an object it counted out too early keeps
 * its call site: one livetrack handed out, or none; never a made-up one. */
static void test_create_with_stack(void)
{
    uint64_t handle = new_handle();
    livetrack_new_object request = {.domain = LIVETRACK_DOMAIN_USER, .type = T_MEM, .handle = handle};
    livetrack_stack_id known = livetrack_capture_stack();
    CHECK_EQ_INT(livetrack_create_with_stack(&request, known), LIVETRACK_OK);
    CHECK_EQ_INT(look(handle).stack, known);
    CHECK_EQ_INT(release(handle), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_create_with_stack(&request, 0), LIVETRACK_OK);
    CHECK_EQ_INT(look(handle).stack, 0);
    CHECK_EQ_INT(release(handle), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_create_with_stack(&request, (livetrack_stack_id)0x7fffffff), LIVETRACK_BAD_ARGUMENT);
    CHECK(!is_live(handle));
}

static uint64_t created_count(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    return stats.created;
}

static livetrack_status destroy(uint64_t handle)
{
    return livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL);
}

/* A release or destroy the API refused is undone: the same object is
 * back, not a new one. */
static void test_restore(void)
{
    uint64_t base = live_objects();
    uint64_t ctx = make(T_CTX, 0);
    uint64_t mem = new_handle();
    CHECK_EQ_INT(create_full(mem, T_MEM, ctx, 0, 0, 4096, OWNER_A), LIVETRACK_OK);
    uint64_t mark = livetrack_mark();
    uint64_t event = make(T_EVENT, ctx);
    livetrack_object before = look(mem);
    uint64_t created = created_count();

    /* Destroyed, then refused: in its place, with all it had. */
    livetrack_keeper *keepers[2] = {NULL, NULL};
    CHECK_EQ_INT(livetrack_keep_parents(&before, keepers), LIVETRACK_OK);
    CHECK(keepers[0] != NULL && keepers[1] == NULL);
    check_counts(ctx, 1, 3); /* the memory, the event, the keeper */
    CHECK_EQ_INT(destroy(mem), LIVETRACK_OK);
    CHECK(!is_live(mem));
    CHECK_EQ_INT(livetrack_restore(&before, before.refs, keepers, "semDestroy"), LIVETRACK_OK);
    livetrack_let_go(keepers[0]);
    livetrack_object after = look(mem);
    CHECK_EQ_INT(after.seq, before.seq);
    CHECK_EQ_INT(after.stack, before.stack);
    CHECK_EQ_INT(after.bytes, 4096);
    CHECK(after.owner == OWNER_A);
    CHECK_EQ_INT(after.parents[0], ctx);
    CHECK_EQ_INT(after.refs, 1);
    CHECK(after.time_ns + 1000 >= before.time_ns && after.time_ns <= before.time_ns + 1000);
    check_counts(ctx, 1, 2);
    CHECK_EQ_INT(created_count(), created); /* not a creation */
    /* Made before the mark, older than the event: as before. */
    CHECK_EQ_INT(livetrack_leaks_since(mark, NULL), 1);
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    CHECK(snapshot_index(snapshot, event) >= 0 && snapshot_index(snapshot, event) < snapshot_index(snapshot, mem));
    livetrack_snapshot_free(snapshot);

    /* A release that left references, refused: the reference it took
     * comes back, and what another thread did meanwhile stays done. */
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_OK);
    before = look(mem);
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);
    check_counts(mem, 1, 0);
    CHECK_EQ_INT(livetrack_retain(LIVETRACK_DOMAIN_USER, T_MEM, mem, NULL), LIVETRACK_OK); /* another thread */
    CHECK_EQ_INT(livetrack_restore(&before, 1, NULL, NULL), LIVETRACK_OK);
    check_counts(mem, 3, 0);
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);

    /* Kept alive by its children, refused: its reference comes back. */
    livetrack_object context_before = look(ctx);
    CHECK_EQ_INT(destroy(ctx), LIVETRACK_OK);
    check_counts(ctx, 0, 2);
    CHECK_EQ_INT(livetrack_restore(&context_before, context_before.refs, NULL, NULL), LIVETRACK_OK);
    check_counts(ctx, 1, 2);
    CHECK_EQ_INT(created_count(), created);

    /* The parent destroyed before, and its handle given to a new object:
     * the keepers are on the very parent, so the object put back holds it,
     * not the new one (a keeper by handle would hold the new one). */
    CHECK_EQ_INT(destroy(ctx), LIVETRACK_OK); /* kept by the memory and the event */
    CHECK_EQ_INT(create_full(ctx, T_CTX, 0, 0, 0, 0, NULL), LIVETRACK_OK); /* the address handed out again */
    before = look(mem);
    CHECK_EQ_INT(livetrack_keep_parents(&before, keepers), LIVETRACK_OK);
    check_counts(ctx, 1, 0); /* the new context: kept by nobody */
    CHECK_EQ_INT(destroy(mem), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_restore(&before, before.refs, keepers, "semDestroy"), LIVETRACK_OK);
    livetrack_let_go(keepers[0]);
    check_counts(ctx, 1, 0);
    check_counts(mem, 2, 0);
    CHECK_EQ_INT(destroy(mem), LIVETRACK_OK);
    CHECK_EQ_INT(destroy(event), LIVETRACK_OK); /* the old context goes with it */
    CHECK_EQ_INT(live_objects(), base + 1);

    /* Made through its first parent (LIVETRACK_PARENT_VIA_FIRST_PARENT):
     * the parent it holds, the grandparent, is the one kept. */
    {
        uint64_t queue = make(T_QUEUE, ctx);
        uint64_t via = new_handle();
        CHECK_EQ_INT(create_full(via, T_MEM, queue, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
        livetrack_object held = look(via);
        CHECK_EQ_INT(held.parents[0], ctx);
        check_counts(ctx, 1, 2); /* the queue and the memory */
        CHECK_EQ_INT(livetrack_keep_parents(&held, keepers), LIVETRACK_OK);
        check_counts(ctx, 1, 3);
        check_counts(queue, 1, 0);
        livetrack_let_go(keepers[0]);
        CHECK_EQ_INT(destroy(via), LIVETRACK_OK);
        CHECK_EQ_INT(destroy(queue), LIVETRACK_OK);
        check_counts(ctx, 1, 0);
    }

    /* A keeper left NULL: no parent there, whatever the handle names. */
    mem = new_handle();
    CHECK_EQ_INT(create_full(mem, T_MEM, ctx, 0, 0, 0, NULL), LIVETRACK_OK);
    before = look(mem);
    livetrack_keeper *none[2] = {NULL, NULL};
    CHECK_EQ_INT(destroy(mem), LIVETRACK_OK);
    CHECK_EQ_INT(livetrack_keep_parents(&before, keepers), LIVETRACK_UNKNOWN); /* not live any more */
    CHECK(keepers[0] == NULL && keepers[1] == NULL);
    CHECK_EQ_INT(livetrack_restore(&before, before.refs, none, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(look(mem).parents[0], 0);
    check_counts(ctx, 1, 0);
    CHECK_EQ_INT(destroy(mem), LIVETRACK_OK);

    /* Another object has the handle now: it stays, nothing changes. */
    before = look(ctx);
    CHECK_EQ_INT(destroy(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(ctx, T_QUEUE, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    livetrack_object queue = look(ctx);
    CHECK_EQ_INT(livetrack_restore(&before, before.refs, NULL, NULL), LIVETRACK_REPLACED);
    CHECK_EQ_INT(look(ctx).seq, queue.seq);
    CHECK_EQ_INT(look(ctx).type, T_QUEUE);
    CHECK_EQ_INT(destroy(ctx), LIVETRACK_OK);

    /* What livetrack never handed out is refused. */
    CHECK_EQ_INT(livetrack_restore(NULL, 1, NULL, NULL), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_restore(&before, 0, NULL, NULL), LIVETRACK_BAD_ARGUMENT);
    livetrack_object made_up = before;
    made_up.seq = UINT64_MAX / 2; /* not handed out yet, by the counter or the clock (years ahead) */
    CHECK_EQ_INT(livetrack_restore(&made_up, 1, NULL, NULL), LIVETRACK_BAD_ARGUMENT);
    made_up = before;
    made_up.seq = 0;
    CHECK_EQ_INT(livetrack_keep_parents(&made_up, keepers), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_keep_parents(NULL, keepers), LIVETRACK_BAD_ARGUMENT);
    CHECK(!is_live(ctx));
    CHECK_EQ_INT(live_objects(), base);
}

static void test_bad_arguments(void)
{
    livetrack_stats before, after;
    livetrack_get_stats(&before);
    uint64_t handle = new_handle();
    CHECK_EQ_INT(livetrack_create(NULL), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_create_with_stack(NULL, 0), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(create_full(0, T_MEM, 0, 0, 0, 0, NULL), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(create_full(handle, LIVETRACK_MAX_TYPES, 0, 0, 0, 0, NULL), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(create_full(handle, LIVETRACK_ANY_TYPE, 0, 0, 0, 0, NULL), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(create_full(handle, 1000, 0, 0, 0, 0, NULL), LIVETRACK_BAD_ARGUMENT);
    static const livetrack_domain bad_domains[] = {LIVETRACK_DOMAIN_ANY, LIVETRACK_DOMAIN_COUNT,
                                                   (livetrack_domain)99, (livetrack_domain)260};
    for (size_t i = 0; i < sizeof bad_domains / sizeof bad_domains[0]; i++) {
        livetrack_new_object request;
        memset(&request, 0, sizeof request);
        request.domain = bad_domains[i];
        request.type = T_MEM;
        request.handle = handle;
        CHECK_EQ_INT(livetrack_create(&request), LIVETRACK_BAD_ARGUMENT);
    }
    livetrack_get_stats(&after);
    CHECK_EQ_INT(after.created, before.created);
    CHECK_EQ_INT(after.live_objects, before.live_objects);
    CHECK(!is_live(handle));

    /* the last valid type is accepted */
    CHECK_EQ_INT(create_full(handle, LIVETRACK_MAX_TYPES - 1, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    livetrack_object object = look(handle);
    CHECK_EQ_INT(object.type, LIVETRACK_MAX_TYPES - 1);
    CHECK(object.type_name && strcmp(object.type_name, "object") == 0); /* undeclared */
    CHECK_EQ_INT(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_MAX_TYPES - 1, handle, NULL, NULL), LIVETRACK_OK);

    /* handle 0 and foreign domains are never live */
    uint32_t left = 5;
    CHECK(livetrack_retain(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0, NULL) != LIVETRACK_OK);
    CHECK(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0, &left, NULL) != LIVETRACK_OK);
    CHECK_EQ_INT(left, 0);
    CHECK(livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0, NULL) != LIVETRACK_OK);
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, 0, NULL) != LIVETRACK_OK);
    uint64_t mem = make(T_MEM, 0);
    for (size_t i = 0; i < sizeof bad_domains / sizeof bad_domains[0]; i++) {
        CHECK(livetrack_retain(bad_domains[i], LIVETRACK_ANY_TYPE, mem, NULL) != LIVETRACK_OK);
        CHECK(livetrack_release(bad_domains[i], LIVETRACK_ANY_TYPE, mem, NULL, NULL) != LIVETRACK_OK);
        CHECK(livetrack_destroy(bad_domains[i], LIVETRACK_ANY_TYPE, mem, NULL) != LIVETRACK_OK);
        CHECK(livetrack_lookup(bad_domains[i], mem, NULL) != LIVETRACK_OK);
    }
    check_counts(mem, 1, 0);
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);
    CHECK(!livetrack_still_live(NULL));

    /* type declarations */
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_ANY, "x", type_names, 1), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_COUNT, "x", type_names, 1), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "x", NULL, 2), LIVETRACK_BAD_ARGUMENT);
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "x", type_names, LIVETRACK_MAX_TYPES + 1),
                 LIVETRACK_BAD_ARGUMENT);
    CHECK(strcmp(livetrack_domain_name(LIVETRACK_DOMAIN_USER), API_NAME) == 0); /* unchanged */
    CHECK(strcmp(livetrack_type_name(LIVETRACK_DOMAIN_USER, T_KERNEL), "sem_kernel") == 0);
    CHECK(strcmp(livetrack_type_name(LIVETRACK_DOMAIN_USER, T_COUNT), "object") == 0);
    CHECK(strcmp(livetrack_type_name(LIVETRACK_DOMAIN_COUNT, 0), "?") == 0);
    CHECK(strcmp(livetrack_domain_name(LIVETRACK_DOMAIN_COUNT), "?") == 0);
    CHECK(strcmp(livetrack_domain_name(LIVETRACK_DOMAIN_CUDA), "CUDA") == 0);
    CHECK(livetrack_status_name(LIVETRACK_NOT_OWNED) != NULL);
    CHECK(livetrack_snapshot_count(NULL) == 0);
    CHECK(livetrack_snapshot_at(NULL, 0) == NULL);
    livetrack_snapshot_free(NULL);
}

/* ---- owners ----------------------------------------------------------------- */

static void test_owners(void)
{
    uint64_t base = live_objects();
    uint64_t ctx_a = new_handle(), ctx_b = new_handle();
    CHECK_EQ_INT(create_full(ctx_a, T_CTX, 0, 0, 0, 0, OWNER_A), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(ctx_b, T_CTX, 0, 0, 0, 0, OWNER_B), LIVETRACK_OK);
    uint64_t mem_a = make(T_MEM, ctx_a); /* inherits A */
    uint64_t mem_b = make(T_MEM, ctx_b); /* inherits B */
    uint64_t event_a = new_handle();     /* VIA: inherits from the named parent */
    CHECK_EQ_INT(create_full(event_a, T_EVENT, mem_a, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
    uint64_t mem_c = new_handle(); /* explicit owner wins over the parent's */
    CHECK_EQ_INT(create_full(mem_c, T_MEM, ctx_a, 0, 0, 0, OWNER_C), LIVETRACK_OK);
    uint64_t loose = make(T_MEM, 0); /* no owner */
    /* VIA on a parent that has no first parent: nothing held, but the
     * owner still comes from the parent named ("inherit from the first
     * parent") */
    uint64_t queue_b = new_handle(), event_b = new_handle();
    CHECK_EQ_INT(create_full(queue_b, T_QUEUE, 0, 0, 0, 0, OWNER_B), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(event_b, T_EVENT, queue_b, 0, LIVETRACK_PARENT_VIA_FIRST_PARENT, 0, NULL), LIVETRACK_OK);
    CHECK(look(event_b).owner == OWNER_B);
    CHECK_EQ_INT(look(event_b).parents[0], 0);
    check_counts(queue_b, 1, 0);
    CHECK_EQ_INT(release(event_b), LIVETRACK_OK);
    CHECK_EQ_INT(release(queue_b), LIVETRACK_OK);

    CHECK(look(mem_a).owner == OWNER_A);
    CHECK(look(mem_b).owner == OWNER_B);
    CHECK(look(event_a).owner == OWNER_A);
    CHECK(look(mem_c).owner == OWNER_C);
    CHECK(look(loose).owner == NULL);

    const uint64_t expect_a[] = {event_a, mem_a, ctx_a}; /* newest first */
    for (int pass = 0; pass < 2; pass++) {
        livetrack_snapshot *snapshot =
            livetrack_snapshot_take(pass ? LIVETRACK_DOMAIN_ANY : LIVETRACK_DOMAIN_USER, OWNER_A);
        CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 3);
        for (size_t i = 0; i < 3 && i < livetrack_snapshot_count(snapshot); i++) {
            CHECK_EQ_INT(livetrack_snapshot_at(snapshot, i)->handle, expect_a[i]);
            CHECK(livetrack_snapshot_at(snapshot, i)->owner == OWNER_A);
        }
        livetrack_snapshot_free(snapshot);
    }
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, OWNER_B);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 2);
    livetrack_snapshot_free(snapshot);
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, OWNER_C);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 1);
    livetrack_snapshot_free(snapshot);
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_OPENCL, OWNER_A);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 0);
    livetrack_snapshot_free(snapshot);
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), base + 7);
    livetrack_snapshot_free(snapshot);

    /* a kept-alive object keeps its owner */
    CHECK_EQ_INT(release(ctx_a), LIVETRACK_OK);
    snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, OWNER_A);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), 3);
    livetrack_snapshot_free(snapshot);

    const uint64_t all[] = {event_a, mem_a, mem_b, ctx_b, mem_c, loose};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_EQ_INT(release(all[i]), LIVETRACK_OK);
    CHECK(!is_live(ctx_a));
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- bounded memory ------------------------------------------------------------- */

static void test_memory_bounded(void)
{
    uint64_t base = live_objects();
    uint64_t ctx = make(T_CTX, 0);
    livetrack_stats stats;
    uint64_t warm_bytes = 0;
    const unsigned cycles = 1000000, warmup = 5000;
    for (unsigned i = 0; i < cycles; i++) {
        if (i == warmup) {
            livetrack_get_stats(&stats);
            warm_bytes = stats.node_bytes;
        }
        /* a fresh handle each time, spread over every shard */
        uint64_t handle = 0x300000000000ull + (uint64_t)(i % 65536) * 0x40 + ((uint64_t)i << 24);
        if (create_full(handle, T_MEM, (i & 1) ? ctx : 0, 0, 0, 128, NULL) != LIVETRACK_OK ||
            release(handle) != LIVETRACK_OK) {
            CHECK(!"create/release cycle failed");
            break;
        }
    }
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.node_bytes, warm_bytes);
    CHECK_EQ_INT(stats.live_objects, base + 1);
    CHECK_EQ_INT(stats.live_bytes, 0);
    check_counts(ctx, 1, 0);

    /* replacing stale objects (with and without children) leaves no residue */
    uint64_t stale = new_handle();
    for (unsigned i = 0; i < 200000; i++) {
        CHECK_EQ_INT(create_full(stale, T_MEM, ctx, 0, 0, 0, NULL), LIVETRACK_OK);
        if (i % 3 == 0) {
            uint64_t child = stale + 8;
            if (create_full(child, T_MEM, stale, 0, 0, 0, NULL) != LIVETRACK_OK)
                CHECK(!"create failed");
            CHECK_EQ_INT(create_full(stale, T_MEM, ctx, 0, 0, 0, NULL), LIVETRACK_OK);
            if (release(child) != LIVETRACK_OK)
                CHECK(!"release failed");
        }
    }
    check_counts(ctx, 1, 1);
    CHECK_EQ_INT(release(stale), LIVETRACK_OK);
    check_counts(ctx, 1, 0);
    livetrack_get_stats(&stats);
    CHECK_EQ_INT(stats.node_bytes, warm_bytes);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), base);
}

/* ---- the leak report ---------------------------------------------------------------- */

/* Read a whole stream into lines (at most max), leaving out the stack
 * frames ("    #0 0x...") and blank lines: the frames' addresses change
 * from build to build, and test_report_text checks them. */
static size_t read_lines(FILE *file, char lines[][256], size_t max)
{
    size_t count = 0;
    rewind(file);
    while (count < max && fgets(lines[count], sizeof lines[count], file)) {
        size_t length = strlen(lines[count]);
        if (length && lines[count][length - 1] == '\n')
            lines[count][--length] = '\0';
        if (length && strncmp(lines[count], "    #", 5) != 0)
            count++;
    }
    return count;
}

static void check_line(char lines[][256], size_t count, size_t index, const char *expected)
{
    CHECK(index < count);
    if (index >= count)
        return;
    if (strcmp(lines[index], expected) != 0) {
        CHECK(!"report line differs");
        fprintf(stderr, "  line %zu:\n    got      \"%s\"\n    expected \"%s\"\n", index, lines[index], expected);
    } else {
        CHECK(1);
    }
}

static void test_leak_report(void)
{
    CHECK_EQ_INT(live_objects(), 0); /* the report lists everything live */
    char lines[64][256], expected[256];

    /* nothing live: nothing written unless asked */
    FILE *file = tmpfile();
    CHECK(file != NULL);
    if (!file)
        return;
    CHECK_EQ_INT(livetrack_write_leak_report(file, 0), 0);
    fflush(file);
    CHECK_EQ_INT(ftell(file), 0);
    CHECK_EQ_INT(livetrack_write_leak_report(file, 1), 0);
    size_t count = read_lines(file, lines, 64);
    CHECK_EQ_INT(count, 2);
    snprintf(expected, sizeof expected, "livetrack: 0 leaked objects (0 bytes) in pid %ld", (long)getpid());
    check_line(lines, count, 0, expected);
    check_line(lines, count, 1, "livetrack: total: 0 leaked objects, 0 bytes (0 bytes)");
    fclose(file);

    /* ctx <- prog (released) <- kernel; ctx <- mem (1536 bytes); an
     * event that goes; a second kernel released entirely */
    uint64_t ctx = 0x1000, prog = 0x2000, kernel = 0x3000, mem = 0x4000, event = 0x5000, gone = 0x6000;
    CHECK_EQ_INT(create_full(ctx, T_CTX, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(prog, T_PROG, ctx, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(kernel, T_KERNEL, prog, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(event, T_EVENT, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(mem, T_MEM, ctx, 0, 0, 1536, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(create_full(gone, T_KERNEL, prog, 0, 0, 0, NULL), LIVETRACK_OK);
    CHECK_EQ_INT(release(prog), LIVETRACK_OK);
    CHECK_EQ_INT(release(event), LIVETRACK_OK);
    CHECK_EQ_INT(release(gone), LIVETRACK_OK);

    for (int always = 0; always < 2; always++) {
        file = tmpfile();
        CHECK_EQ_INT(livetrack_write_leak_report(file, always), 3);
        count = read_lines(file, lines, 64);
        fclose(file);
        CHECK_EQ_INT(count, 16);
        snprintf(expected, sizeof expected, "livetrack: 3 leaked objects (1.5 KiB) from 3 call sites in pid %ld",
                 (long)getpid());
        check_line(lines, count, 0, expected);
        /* one site per creating line: largest first, then oldest */
        check_line(lines, count, 1, "livetrack: 1 leaked sem_mem (1.5 KiB) created at:");
        check_line(lines, count, 2, "  sem_mem 0x0000000000004000  refs 1  1536 bytes");
        check_line(lines, count, 3, "livetrack: 1 leaked sem_ctx (0 bytes) created at:");
        check_line(lines, count, 4, "  sem_ctx 0x0000000000001000  refs 1");
        check_line(lines, count, 5, "livetrack: 1 leaked sem_kernel (0 bytes) created at:");
        check_line(lines, count, 6, "  sem_kernel 0x0000000000003000  refs 1");
        check_line(lines, count, 7, "  keeps alive 1 object the program released: sem_prog 0x0000000000002000");
        check_line(lines, count, 8, "livetrack: leaks by type:");
        check_line(lines, count, 9, "livetrack:   semtest    sem_mem                         1 object   1.5 KiB");
        check_line(lines, count, 10, "livetrack:   semtest    sem_ctx                         1 object   0 bytes");
        check_line(lines, count, 11, "livetrack:   semtest    sem_kernel                      1 object   0 bytes");
        check_line(lines, count, 12, "livetrack: leaks by API:");
        check_line(lines, count, 13, "livetrack:   semtest                                    3 objects  1.5 KiB");
        check_line(lines, count, 14, "livetrack: 1 object the program released is kept alive by leaked objects");
        check_line(lines, count, 15, "livetrack: total: 3 leaked objects, 1536 bytes (1.5 KiB), from 3 call sites");
    }

    /* four more kernels from one line: one site, three examples and the
     * rest counted, keeping the released program alive */
    uint64_t extra[4] = {0x7000, 0x8000, 0x9000, 0xa000};
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(create_full(extra[i], T_KERNEL, prog, 0, 0, 4096, NULL), LIVETRACK_OK);
    file = tmpfile();
    CHECK_EQ_INT(livetrack_write_leak_report(file, 0), 7);
    count = read_lines(file, lines, 64);
    fclose(file);
    CHECK_EQ_INT(count, 22);
    snprintf(expected, sizeof expected, "livetrack: 7 leaked objects (17.5 KiB) from 4 call sites in pid %ld",
             (long)getpid());
    check_line(lines, count, 0, expected);
    check_line(lines, count, 1, "livetrack: 4 leaked sem_kernel (16.0 KiB) created at:");
    for (int i = 0; i < 3; i++) {
        snprintf(expected, sizeof expected, "  sem_kernel 0x%016llx  refs 1  4096 bytes", (unsigned long long)extra[i]);
        check_line(lines, count, 2 + (size_t)i, expected);
    }
    check_line(lines, count, 5, "  and 1 more");
    check_line(lines, count, 6, "  keeps alive 1 object the program released: sem_prog 0x0000000000002000");
    check_line(lines, count, 7, "livetrack: 1 leaked sem_mem (1.5 KiB) created at:");
    check_line(lines, count, 14, "livetrack: leaks by type:");
    check_line(lines, count, 15, "livetrack:   semtest    sem_kernel                      5 objects  16.0 KiB");
    check_line(lines, count, 16, "livetrack:   semtest    sem_mem                         1 object   1.5 KiB");
    check_line(lines, count, 17, "livetrack:   semtest    sem_ctx                         1 object   0 bytes");
    check_line(lines, count, 19, "livetrack:   semtest                                    7 objects  17.5 KiB");
    check_line(lines, count, 20, "livetrack: 1 object the program released is kept alive by leaked objects");
    check_line(lines, count, 21, "livetrack: total: 7 leaked objects, 17920 bytes (17.5 KiB), from 4 call sites");

    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(release(extra[i]), LIVETRACK_OK);
    CHECK_EQ_INT(release(kernel), LIVETRACK_OK);
    CHECK_EQ_INT(release(mem), LIVETRACK_OK);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    CHECK_EQ_INT(live_objects(), 0);
    file = tmpfile();
    CHECK_EQ_INT(livetrack_write_leak_report(file, 0), 0);
    fflush(file);
    CHECK_EQ_INT(ftell(file), 0);
    fclose(file);

    /* a released context held only by a keeper (a destroy in progress in
     * another thread): alive, but no leaked object keeps it */
    CHECK_EQ_INT(create_full(ctx, T_CTX, 0, 0, 0, 0, NULL), LIVETRACK_OK);
    livetrack_keeper *keeper = livetrack_keep_alive(LIVETRACK_DOMAIN_USER, ctx);
    CHECK(keeper != NULL);
    CHECK_EQ_INT(release(ctx), LIVETRACK_OK);
    file = tmpfile();
    CHECK_EQ_INT(livetrack_write_leak_report(file, 1), 0);
    count = read_lines(file, lines, 64);
    fclose(file);
    CHECK_EQ_INT(count, 3);
    check_line(lines, count, 1, "livetrack: 1 object the program released is still held by suppressed objects or by "
                                "calls in progress");
    check_line(lines, count, 2, "livetrack: total: 0 leaked objects, 0 bytes (0 bytes)");
    livetrack_let_go(keeper);
    CHECK_EQ_INT(live_objects(), 0);
}

/* ---- the exit report, in child processes ---------------------------------------------- */

/* The child's side: leak `leaks` objects (plus one it releases) and exit
 * normally, so destructors write the exit report. */
static int exit_child_main(int leaks)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, API_NAME, type_names, T_COUNT);
    for (int i = 0; i < leaks; i++)
        create_full(0x100 * (uint64_t)(i + 1), T_MEM, 0, 0, 0, 100, NULL);
    create_full(0x99990, T_CTX, 0, 0, 0, 0, NULL);
    release(0x99990);
    return 0;
}

/* Run a fresh copy of this program (settings are read once per process,
 * at load) with LIVETRACK_EXIT_REPORT=mode and LIVETRACK_OUTPUT set, as
 * exit_child_main(leaks). Returns the child's pid. */
static pid_t run_exit_child(const char *dir, const char *mode, int leaks)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char pattern[512], count[16];
        snprintf(pattern, sizeof pattern, "%s/report-%%p.txt", dir);
        snprintf(count, sizeof count, "%d", leaks);
        setenv("LIVETRACK_EXIT_REPORT", mode, 1);
        setenv("LIVETRACK_OUTPUT", pattern, 1);
        execl("/proc/self/exe", "test_registry_semantics", "exit-child", count, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(pid > 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return pid;
}

static FILE *open_report(const char *dir, pid_t pid, char *path, size_t size)
{
    snprintf(path, size, "%s/report-%ld.txt", dir, (long)pid);
    return fopen(path, "r");
}

static void test_exit_report(void)
{
    char dir[] = "/tmp/livetrack-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[600], lines[64][256], expected[256];

    /* auto with leaks: a report naming the child's pid */
    pid_t pid = run_exit_child(dir, "auto", 2);
    FILE *file = open_report(dir, pid, path, sizeof path);
    CHECK(file != NULL);
    if (file) {
        size_t count = read_lines(file, lines, 64);
        fclose(file);
        CHECK_EQ_INT(count, 9);
        snprintf(expected, sizeof expected, "livetrack: 2 leaked objects (200 bytes) from 1 call site at exit of pid %ld",
                 (long)pid);
        check_line(lines, count, 0, expected);
        check_line(lines, count, 1, "livetrack: 2 leaked sem_mem (200 bytes) created at:");
        check_line(lines, count, 2, "  sem_mem 0x0000000000000100  refs 1  100 bytes");
        check_line(lines, count, 3, "  sem_mem 0x0000000000000200  refs 1  100 bytes");
        check_line(lines, count, 4, "livetrack: leaks by type:");
        check_line(lines, count, 5, "livetrack:   semtest    sem_mem                         2 objects  200 bytes");
        check_line(lines, count, 6, "livetrack: leaks by API:");
        check_line(lines, count, 7, "livetrack:   semtest                                    2 objects  200 bytes");
        check_line(lines, count, 8, "livetrack: total: 2 leaked objects, 200 bytes (200 bytes), from 1 call site");
        unlink(path);
    }

    /* auto without leaks: nothing (the file may exist, empty) */
    pid = run_exit_child(dir, "auto", 0);
    file = open_report(dir, pid, path, sizeof path);
    if (file) {
        CHECK_EQ_INT(read_lines(file, lines, 64), 0);
        fclose(file);
        unlink(path);
    }

    /* always without leaks: a report of none */
    pid = run_exit_child(dir, "always", 0);
    file = open_report(dir, pid, path, sizeof path);
    CHECK(file != NULL);
    if (file) {
        size_t count = read_lines(file, lines, 64);
        fclose(file);
        CHECK_EQ_INT(count, 2);
        snprintf(expected, sizeof expected, "livetrack: 0 leaked objects (0 bytes) at exit of pid %ld", (long)pid);
        check_line(lines, count, 0, expected);
        unlink(path);
    }

    /* off with leaks: nothing at all */
    pid = run_exit_child(dir, "off", 3);
    file = open_report(dir, pid, path, sizeof path);
    CHECK(file == NULL);
    if (file) {
        fclose(file);
        unlink(path);
    }
    CHECK(rmdir(dir) == 0);
}

/* Whether the mapping holding `address` is advised for huge pages (the
 * "hg" of its VmFlags in /proc/self/smaps); -1 when it cannot be read. */
static int mapping_wants_huge_pages(uintptr_t address)
{
    FILE *smaps = fopen("/proc/self/smaps", "r");
    if (!smaps)
        return -1;
    char line[512];
    int inside = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, smaps)) {
        unsigned long start, end;
        char dash;
        if (sscanf(line, "%lx%c%lx ", &start, &dash, &end) == 3 && dash == '-') {
            inside = address >= start && address < end;
        } else if (inside && !strncmp(line, "VmFlags:", 8)) {
            found = strstr(line, " hg") != NULL;
        }
    }
    fclose(smaps);
    return found;
}

/* A snapshot of 10^5 objects copies ~10 MB at once. Reports of 10^6
 * objects spent most of their time in page faults on VMs where a fault
 * costs 10-15 us, so large blocks are advised for transparent huge pages;
 * the copy must still be complete and newest first. */
static void test_large_snapshot_memory(void)
{
    uint64_t base = live_objects();
    const unsigned count = 100000;
    for (unsigned i = 0; i < count; i++)
        if (create_full(0x500000000000ull + (uint64_t)i * 0x40, T_MEM, 0, 0, 0, 64, NULL) != LIVETRACK_OK)
            CHECK(!"create failed");
    livetrack_snapshot *snapshot = livetrack_snapshot_take(LIVETRACK_DOMAIN_USER, NULL);
    CHECK(snapshot != NULL);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), base + count);
    uintptr_t lowest = UINTPTR_MAX, highest = 0;
    uint64_t previous_seq = UINT64_MAX;
    int ordered = 1;
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        ordered &= object->seq < previous_seq;
        previous_seq = object->seq;
        lowest = (uintptr_t)object < lowest ? (uintptr_t)object : lowest;
        highest = (uintptr_t)object > highest ? (uintptr_t)object : highest;
    }
    CHECK(ordered);
    CHECK(livetrack_snapshot_at(snapshot, 0)->handle == 0x500000000000ull + (uint64_t)(count - 1) * 0x40);
    /* The middle of the copy lies in the advised part of the block (it
     * leaves out at most 2 MiB at either end). Kernels built without
     * transparent huge pages refuse the advice, and then nothing is set. */
    int thp_kernel = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
    CHECK_EQ_INT(mapping_wants_huge_pages(lowest + (highest - lowest) / 2), thp_kernel);
    livetrack_snapshot_free(snapshot);
    for (unsigned i = 0; i < count; i++)
        if (release(0x500000000000ull + (uint64_t)i * 0x40) != LIVETRACK_OK)
            CHECK(!"release failed");
    CHECK_EQ_INT(live_objects(), base);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "exit-child"))
        return exit_child_main(atoi(argv[2]));
    CHECK_EQ_INT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, API_NAME, type_names, T_COUNT), LIVETRACK_OK);
    CHECK(strcmp(livetrack_domain_name(LIVETRACK_DOMAIN_USER), API_NAME) == 0);
    CHECK_EQ_INT(live_objects(), 0);

    test_exit_report();
    test_leak_report();
    test_kept_alive();
    test_keepers();
    test_released_type();
    test_released_description();
    test_parents();
    test_replacement();
    test_bad_arguments();
    test_create_with_stack();
    test_restore();
    test_owners();
    test_memory_bounded();
    test_large_snapshot_memory();
    CHECK_EQ_INT(live_objects(), 0);
    return check_summary("test_registry_semantics");
}
