/*
 * A buffer made inside an event callback, in the event's context, once
 * the program has let go of that context, its queue and the event: the
 * buffer is all that holds the context afterwards. Plain OpenCL, so that
 * cl_edge_calls (a program that knows nothing of livetrack) and the
 * extension's tests play the same scene.
 */
#ifndef LIVETRACK_TESTS_BUFFER_MADE_IN_CALLBACK_H
#define LIVETRACK_TESTS_BUFFER_MADE_IN_CALLBACK_H

#include <CL/cl.h>
#include <stdatomic.h>
#include <time.h>

typedef struct buffer_made_in_callback {
    atomic_int go, done;
    cl_int create;     /* clCreateBuffer's error code in the callback */
    cl_context context; /* the event's, as the callback asked it */
    cl_mem buffer;
} buffer_made_in_callback;

/* Waits until the program has let go of everything of the context, then
 * makes the buffer. */
static void CL_CALLBACK buffer_made_in_callback_make(cl_event event, cl_int status, void *data)
{
    buffer_made_in_callback *made = data;
    (void)status;
    while (!atomic_load(&made->go))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof made->context, &made->context, NULL) != CL_SUCCESS)
        made->context = NULL;
    made->buffer = clCreateBuffer(made->context, CL_MEM_READ_WRITE, 64, NULL, &made->create);
    atomic_store(&made->done, 1);
}

/* *first keeps the first error of a sequence of calls. */
static void buffer_made_in_callback_note(cl_int *first, cl_int result)
{
    if (*first == CL_SUCCESS)
        *first = result;
}

/* Plays the scene on `device` and waits (up to 10 s) for the callback:
 * *made then says what it did (done 0: it did not run in time). Returns
 * the first failing call's error, else CL_SUCCESS. */
static cl_int buffer_made_in_callback_run(cl_device_id device, buffer_made_in_callback *made)
{
    *made = (buffer_made_in_callback){.go = 0, .done = 0, .create = CL_INVALID_VALUE};
    cl_int err = CL_SUCCESS, made_err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &made_err);
    buffer_made_in_callback_note(&err, made_err);
    cl_command_queue queue = context ? clCreateCommandQueueWithProperties(context, device, NULL, &made_err) : NULL;
    if (context)
        buffer_made_in_callback_note(&err, made_err);
    cl_event gate = queue ? clCreateUserEvent(context, &made_err) : NULL;
    if (queue)
        buffer_made_in_callback_note(&err, made_err);
    cl_event marker = NULL;
    if (gate) {
        buffer_made_in_callback_note(&err, clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker));
        if (marker)
            buffer_made_in_callback_note(
                &err, clSetEventCallback(marker, CL_COMPLETE, buffer_made_in_callback_make, made));
        buffer_made_in_callback_note(&err, clFlush(queue));
    }
    /* Everything let go of before the gate opens: only the driver holds
     * the marker, and through it the context, when the callback runs. */
    if (marker)
        buffer_made_in_callback_note(&err, clReleaseEvent(marker));
    if (queue)
        buffer_made_in_callback_note(&err, clReleaseCommandQueue(queue));
    if (context)
        buffer_made_in_callback_note(&err, clReleaseContext(context));
    if (gate) {
        buffer_made_in_callback_note(&err, clSetUserEventStatus(gate, CL_COMPLETE));
        buffer_made_in_callback_note(&err, clReleaseEvent(gate));
    }
    atomic_store(&made->go, 1);
    for (int i = 0; marker && i < 10000 && !atomic_load(&made->done); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return err;
}

#endif
