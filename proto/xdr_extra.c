#include "xdr_extra.h"

bool_t tdm_xdr_void(XDR *xdrs, void *unused)
{
    return TRUE;
}
