/* The context health state machine and the sticky-error classification
 * (server/health.h), as tables. */
#include <criterion/criterion.h>
#include <driver_types.h>

#include "health.h"

static const struct {
    tdm_health_state from;
    tdm_health_event ev;
    bool standby;
    tdm_health_state to;
    tdm_health_action action;
} transitions[] = {
    /* a loss with a standby: the sessions go there, the server goes */
    { TDM_HEALTH_HEALTHY, TDM_HEV_LOST, true, TDM_HEALTH_HANDING_OFF, TDM_HACT_EXIT_HANDED_OFF },
    /* without one: name the culprit, let the old sessions end, rebuild */
    { TDM_HEALTH_HEALTHY, TDM_HEV_LOST, false, TDM_HEALTH_DRAINING, TDM_HACT_LOG_CULPRIT },
    { TDM_HEALTH_DRAINING, TDM_HEV_LOST, false, TDM_HEALTH_DRAINING, TDM_HACT_NONE },
    { TDM_HEALTH_DRAINING, TDM_HEV_LOST, true, TDM_HEALTH_DRAINING, TDM_HACT_NONE },
    { TDM_HEALTH_DRAINING, TDM_HEV_DRAINED, false, TDM_HEALTH_REBUILDING, TDM_HACT_REBUILD },
    { TDM_HEALTH_REBUILDING, TDM_HEV_REBUILT, false, TDM_HEALTH_HEALTHY, TDM_HACT_NONE },
    { TDM_HEALTH_REBUILDING, TDM_HEV_REBUILD_FAILED, false, TDM_HEALTH_EXITED, TDM_HACT_EXIT_LOST },
    { TDM_HEALTH_REBUILDING, TDM_HEV_LOST, false, TDM_HEALTH_REBUILDING, TDM_HACT_NONE },
    /* news out of turn changes nothing */
    { TDM_HEALTH_HEALTHY, TDM_HEV_DRAINED, false, TDM_HEALTH_HEALTHY, TDM_HACT_NONE },
    { TDM_HEALTH_HEALTHY, TDM_HEV_REBUILT, false, TDM_HEALTH_HEALTHY, TDM_HACT_NONE },
    { TDM_HEALTH_DRAINING, TDM_HEV_REBUILT, false, TDM_HEALTH_DRAINING, TDM_HACT_NONE },
    /* on the way out, nothing more happens */
    { TDM_HEALTH_HANDING_OFF, TDM_HEV_LOST, true, TDM_HEALTH_HANDING_OFF, TDM_HACT_NONE },
    { TDM_HEALTH_HANDING_OFF, TDM_HEV_DRAINED, true, TDM_HEALTH_HANDING_OFF, TDM_HACT_NONE },
    { TDM_HEALTH_EXITED, TDM_HEV_LOST, false, TDM_HEALTH_EXITED, TDM_HACT_NONE },
    { TDM_HEALTH_EXITED, TDM_HEV_REBUILT, false, TDM_HEALTH_EXITED, TDM_HACT_NONE },
};

Test(health, transitions)
{
    for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++) {
        tdm_health_step st = tdm_health_next(transitions[i].from, transitions[i].ev, transitions[i].standby);

        cr_expect_eq(st.state, transitions[i].to, "row %zu: %s -> %s, want %s", i,
                     tdm_health_state_name(transitions[i].from), tdm_health_state_name(st.state),
                     tdm_health_state_name(transitions[i].to));
        cr_expect_eq(st.action, transitions[i].action, "row %zu: action %d, want %d", i, st.action,
                     transitions[i].action);
    }
}

/* A whole life: lost, drained, rebuilt, and lost again. */
Test(health, a_rebuilt_context_can_be_lost_again)
{
    static const tdm_health_event evs[] = { TDM_HEV_LOST, TDM_HEV_DRAINED, TDM_HEV_REBUILT, TDM_HEV_LOST };
    static const tdm_health_state want[] = { TDM_HEALTH_DRAINING, TDM_HEALTH_REBUILDING, TDM_HEALTH_HEALTHY,
                                             TDM_HEALTH_DRAINING };
    tdm_health_state s = TDM_HEALTH_HEALTHY;

    for (size_t i = 0; i < 4; i++) {
        s = tdm_health_next(s, evs[i], false).state;
        cr_expect_eq(s, want[i], "step %zu: %s", i, tdm_health_state_name(s));
    }
}

static const struct {
    int err;
    tdm_err_class cls;
    bool sticky;
} errors[] = {
    { cudaSuccess, TDM_ERR_NONE, false },
    /* CUDA 13's sticky errors */
    { cudaErrorIllegalAddress, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorLaunchFailure, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorAssert, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorHardwareStackError, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorIllegalInstruction, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorMisalignedAddress, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorInvalidAddressSpace, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorInvalidPc, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorLaunchTimeout, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorContained, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorTensorMemoryLeak, TDM_ERR_CONTEXT_FATAL, true },
    { cudaErrorExternalDevice, TDM_ERR_CONTEXT_FATAL, true },
    /* the context is gone without a sticky error */
    { cudaErrorECCUncorrectable, TDM_ERR_CONTEXT_FATAL, false },
    { cudaErrorMpsConnectionFailed, TDM_ERR_CONTEXT_FATAL, false },
    { cudaErrorMpsRpcFailure, TDM_ERR_CONTEXT_FATAL, false },
    { cudaErrorMpsServerNotReady, TDM_ERR_CONTEXT_FATAL, false },
    { cudaErrorMpsClientTerminated, TDM_ERR_CONTEXT_FATAL, false },
    /* one call's failure: nothing else is touched */
    { cudaErrorInvalidConfiguration, TDM_ERR_CALL, false },
    { cudaErrorLaunchOutOfResources, TDM_ERR_CALL, false },
    { cudaErrorInvalidValue, TDM_ERR_CALL, false },
    { cudaErrorMemoryAllocation, TDM_ERR_CALL, false },
    { cudaErrorNotReady, TDM_ERR_CALL, false },
    { cudaErrorInvalidDeviceFunction, TDM_ERR_CALL, false },
    { cudaErrorCooperativeLaunchTooLarge, TDM_ERR_CALL, false },
    { cudaErrorInvalidResourceHandle, TDM_ERR_CALL, false },
    { cudaErrorUnknown, TDM_ERR_CALL, false },
};

Test(health, classification)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
        cr_expect_eq(tdm_health_classify(errors[i].err), errors[i].cls, "error %d", errors[i].err);
        cr_expect_eq(tdm_health_is_sticky(errors[i].err), errors[i].sticky, "error %d", errors[i].err);
    }
}
