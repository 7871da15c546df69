/*
 * Misuse: count it, keep the first LT_MISUSE_KEPT for reports, and print
 * it the way AddressSanitizer prints a bad access: what happened and the
 * stack of the bad call, then where the object was created and where it
 * was released, when livetrack still knows.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "core_internal.h"
#include "creation_order.h"
#include "printable.h"
#include "history.h"
#include "symbols.h"
#include "timeline.h"

#define BLOCK_SIZE 8192u
#define FRAMES_SHOWN 32u

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static lt_misuse_record records[LT_MISUSE_KEPT];
static size_t kept;

typedef struct text_block {
    char text[BLOCK_SIZE];
    size_t used;
} text_block;

static void append(text_block *block, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(text_block *block, const char *fmt, ...)
{
    if (block->used >= sizeof block->text - 1)
        return;
    va_list args;
    va_start(args, fmt);
    int length = vsnprintf(block->text + block->used, sizeof block->text - block->used, fmt, args);
    va_end(args);
    if (length > 0)
        block->used += (size_t)length;
    if (block->used >= sizeof block->text)
        block->used = sizeof block->text - 1;
}

static void append_stack(text_block *block, livetrack_stack_id stack)
{
    livetrack_frame frames[FRAMES_SHOWN];
    size_t count = livetrack_stack_symbolize(stack, frames, FRAMES_SHOWN);
    if (!count) {
        append(block, "    (no stack: LIVETRACK_STACK_DEPTH=0)\n");
        return;
    }
    for (size_t i = 0; i < count; i++) {
        char line[1024];
        lt_format_frame(&frames[i], (unsigned)i, line, sizeof line);
        append(block, "%s\n", line);
    }
}

/* Report a misuse of the object `history` describes, in `state`:
 * lt_misuse looks both up by handle, livetrack_report_misuse_of takes
 * them from the caller's description of the object. */
static void misuse_described(unsigned domain, uint64_t handle, const char *message, lt_object_state state,
                             const lt_released *history)
{
    lt_count_misuse();
    /* Always the stack of the refused call, whatever the depth setting
     * says about creations: this is the line someone has to fix. */
    livetrack_stack_id call_stack = livetrack_capture_stack();
    int known = state != LT_OBJECT_UNKNOWN;

    lt_misuse_record record = {
        .seq = lt_creation_number_now(),
        .time_ns = lt_ticks_to_ns(lt_ticks()),
        .domain = (uint8_t)domain,
        .type = known ? history->type : LIVETRACK_ANY_TYPE,
        .handle = handle,
        .call_stack = call_stack,
        .create_stack = known ? history->create_stack : 0,
        .release_stack = known ? history->release_stack : 0,
    };
    snprintf(record.message, sizeof record.message, "%s", message);
    if (lt_timeline_on) {
        /* Front ends start their messages with the call ("clRetainEvent(0x..."):
         * that names the timeline row. The row is written first so that the
         * record can say which row it is: `livetrack trace` joins the two on
         * it (the record's seq is a creation number, the row's counts rows). */
        char call[64] = "";
        size_t length = strspn(message, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (length && length < sizeof call && message[length] == '(')
            snprintf(call, sizeof call, "%.*s", (int)length, message);
        record.timeline_row = lt_timeline_event(LT_EVENT_MISUSE, call, domain, record.type, handle, 0);
    }
    pthread_mutex_lock(&mutex);
    if (kept < LT_MISUSE_KEPT)
        records[kept++] = record;
    pthread_mutex_unlock(&mutex);

    if (!lt_diag_would_print())
        return;
    /* Not thread-local: this library's TLS must fit the small static TLS
     * reserve a dlopen()ed library gets (initial-exec model). */
    text_block *block = lt_malloc(sizeof *block);
    if (!block) {
        lt_diag("ERROR: %s", message);
        return;
    }
    block->used = 0;
    append(block, "livetrack: ERROR: %s\n", message);
    if (call_stack)
        append_stack(block, call_stack);
    if (domain && handle) {
        char type_buffer[LT_PRINTABLE_NAME_MAX], api_buffer[LT_PRINTABLE_NAME_MAX];
        const char *type_name = known ? lt_printable(livetrack_type_name(domain, history->type), type_buffer,
                                                     sizeof type_buffer)
                                      : "object";
        if (!known) {
            append(block, "livetrack: %s handle 0x%llx was never created, or was released too long ago to be remembered\n",
                   lt_printable(livetrack_domain_name(domain), api_buffer, sizeof api_buffer),
                   (unsigned long long)handle);
        } else {
            append(block, "livetrack: %s 0x%llx was created at:\n", type_name, (unsigned long long)handle);
            append_stack(block, history->create_stack);
            const char *released = state == LT_OBJECT_KEPT_ALIVE ? "released by the program (its children keep it alive)"
                                                                 : "released";
            if (state != LT_OBJECT_HELD && history->release_stack) {
                append(block, "livetrack: and %s at:\n", released);
                append_stack(block, history->release_stack);
            } else if (state != LT_OBJECT_HELD) {
                append(block, "livetrack: and %s (LIVETRACK_RELEASE_STACKS=1 shows where)\n", released);
            }
        }
    }
    lt_diag_block(block->text);
    lt_free(block);
}

void lt_misuse(unsigned domain, uint64_t handle, const char *message)
{
    lt_released history = {0};
    lt_object_state state = domain && handle ? lt_object_history(domain, handle, &history) : LT_OBJECT_UNKNOWN;
    misuse_described(domain, handle, message, state, &history);
}

void livetrack_report_misuse(const char *fmt, ...)
{
    char message[sizeof records[0].message];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    lt_misuse(0, 0, message);
}

void livetrack_report_misuse_on(livetrack_domain domain, uint64_t handle, const char *fmt, ...)
{
    char message[sizeof records[0].message];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    lt_misuse(domain < LIVETRACK_DOMAIN_COUNT ? domain : 0, handle, message);
}

void livetrack_report_misuse_of(const livetrack_object *object, const char *fmt, ...)
{
    char message[sizeof records[0].message];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    if (!object || !object->handle || !object->domain || object->domain >= LIVETRACK_DOMAIN_COUNT) {
        lt_misuse(0, 0, message);
        return;
    }
    /* Named as the caller described it, live: the handle may already be
     * released (a front end that destroyed the object first, so that only
     * one of two racing calls reports it), and looking it up again would
     * present that release as the program's. */
    lt_released history = {
        .domain = (uint8_t)object->domain,
        .type = (uint8_t)object->type,
        .handle = object->handle,
        .seq = object->seq,
        .create_stack = object->stack,
        .bytes = object->bytes,
        .owner = object->owner,
    };
    misuse_described(object->domain, object->handle, message, LT_OBJECT_HELD, &history);
}

size_t lt_misuse_records(lt_misuse_record *out, size_t max)
{
    pthread_mutex_lock(&mutex);
    size_t count = kept < max ? kept : max;
    memcpy(out, records, count * sizeof *out);
    pthread_mutex_unlock(&mutex);
    return count;
}

size_t lt_misuse_kept(void)
{
    pthread_mutex_lock(&mutex);
    size_t count = kept;
    pthread_mutex_unlock(&mutex);
    return count;
}

void lt_history_lock(void)
{
    lt_peak_lock();
    pthread_mutex_lock(&mutex);
}

void lt_history_unlock(void)
{
    pthread_mutex_unlock(&mutex);
    lt_peak_unlock();
}
