#include "health.h"

#include <driver_types.h>

/* CUDA 13's errors documented as sticky: "This leaves the process in an
 * inconsistent state and any further CUDA work will return the same error.
 * To continue using CUDA, the process must be terminated and relaunched"
 * (driver_types.h), and the assert, whose words differ.  cudaErrorUnknown
 * is not among them: natively it does not always mean a lost context. */
bool tdm_health_is_sticky(int err)
{
    switch (err) {
    case cudaErrorContained:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
        return true;
    default:
        return false;
    }
}

/* Beyond sticky, the context is gone when the GPU's memory failed or, under
 * MPS, when the MPS server that held it did.  Everything else fails only
 * the call (a bad launch configuration, an invalid value, out of memory, a
 * query not ready). */
tdm_err_class tdm_health_classify(int err)
{
    if (err == cudaSuccess)
        return TDM_ERR_NONE;
    if (tdm_health_is_sticky(err))
        return TDM_ERR_CONTEXT_FATAL;
    switch (err) {
    case cudaErrorECCUncorrectable:
    case cudaErrorMpsConnectionFailed:
    case cudaErrorMpsRpcFailure:
    case cudaErrorMpsServerNotReady:
    case cudaErrorMpsClientTerminated:
        return TDM_ERR_CONTEXT_FATAL;
    default:
        return TDM_ERR_CALL;
    }
}

tdm_health_step tdm_health_next(tdm_health_state state, tdm_health_event ev, bool standby)
{
    tdm_health_step same = { state, TDM_HACT_NONE };

    switch (state) {
    case TDM_HEALTH_HEALTHY:
        if (ev == TDM_HEV_LOST)
            return standby ? (tdm_health_step){ TDM_HEALTH_HANDING_OFF, TDM_HACT_EXIT_HANDED_OFF }
                           : (tdm_health_step){ TDM_HEALTH_DRAINING, TDM_HACT_LOG_CULPRIT };
        return same;   /* drained or rebuilt news of an older context */
    case TDM_HEALTH_DRAINING:
        /* Later losses are the same loss seen by other sessions. */
        if (ev == TDM_HEV_DRAINED)
            return (tdm_health_step){ TDM_HEALTH_REBUILDING, TDM_HACT_REBUILD };
        return same;
    case TDM_HEALTH_REBUILDING:
        if (ev == TDM_HEV_REBUILT)
            return (tdm_health_step){ TDM_HEALTH_HEALTHY, TDM_HACT_NONE };
        if (ev == TDM_HEV_REBUILD_FAILED)
            return (tdm_health_step){ TDM_HEALTH_EXITED, TDM_HACT_EXIT_LOST };
        return same;
    case TDM_HEALTH_HANDING_OFF:
    case TDM_HEALTH_EXITED:
        return same;   /* the process is on its way out */
    }
    return same;
}

const char *tdm_health_state_name(tdm_health_state state)
{
    switch (state) {
    case TDM_HEALTH_HEALTHY: return "healthy";
    case TDM_HEALTH_HANDING_OFF: return "handing off";
    case TDM_HEALTH_DRAINING: return "draining";
    case TDM_HEALTH_REBUILDING: return "rebuilding";
    case TDM_HEALTH_EXITED: return "exited";
    }
    return "?";
}

void tdm_health_init(tdm_health *h)
{
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->changed, NULL);
    h->state = TDM_HEALTH_HEALTHY;
    h->generation = 1;
    h->lost_err = 0;
    h->culprit = 0;
    h->old_sessions = 0;
}

void tdm_health_destroy(tdm_health *h)
{
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
}
