/*
 * Prints what a library's constructor got from zeInit before main, then
 * leaks one context (ze_init_order runs it with and without the front end).
 */
#include <stdio.h>

#include "ze_test_util.h"

ze_result_t ze_init_early_result(void);

int main(void)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    zt_open(&driver, &device);
    ze_context_handle_t leaked = NULL;
    ze_result_t made = zeContextCreate(driver, &zt_context_desc, &leaked);
    printf("zeInit in a library constructor: 0x%x\ncontext: 0x%x\n", (unsigned)ze_init_early_result(),
           (unsigned)made);
    return 0;
}
