/*
 * podevents: what each unschedulable pod is told about a round —
 * TriggeredScaleUp, or NotTriggerScaleUp with each group's reason from the
 * fit arithmetic (sched.c). Pure: sending is kube/recorder's.
 */
#ifndef LUASCALE_PODEVENTS_H
#define LUASCALE_PODEVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "policy/plan.h"

#define PODEVENT_TRIGGERED "TriggeredScaleUp"
#define PODEVENT_NOT_TRIGGERED "NotTriggerScaleUp"
/* the pod waits for capacity already on its way (a node starting, an
 * instance launched): no NotTriggerScaleUp for it */
#define PODEVENT_WAITING "WaitingForNode"

/* Called once per unschedulable pod: 'type' "Normal", 'reason' one of the
 * two above, 'message' for people. All borrowed for the call. */
typedef void (*podevents_fn)(void *ctx, const struct pod *p, const char *type,
			     const char *reason, const char *message);

/*
 * For each pending pod marked unschedulable in 's' (at most 'max_pods',
 * 0: all), calls 'fn' with its Event: TriggeredScaleUp when a scale_up of
 * 'accepted' is for a group whose template fits it ("pod triggered
 * scale-up: workers 3->5 (max: 6)"), else NotTriggerScaleUp saying why:
 * "fits no group: needs nvidia.com/gpu (gpu: ...; workers: ...)" when no
 * group's template fits it, else what holds back each group that fits (at
 * its max size, backed off, or no scale-up planned for it). Returns how
 * many pods were told.
 */
size_t podevents_explain(const struct snapshot *s, const struct plan *accepted, size_t max_pods,
			 podevents_fn fn, void *ctx);

#endif
