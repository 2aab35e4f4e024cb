/* placeholder */
#include "driver.h"
void tdm_cu_cls_context_gone(tdm_cu_ctx *ctx)
{
    (void)ctx;
}
