/**
 * The runtime's flows: a claimed task becomes an activation (task-runner.ts, activation.ts), what
 * follows it (after-activation.ts), wake-ups and check-ins (wakeup.ts), an approval resuming its
 * task (approval-resume.ts), a webhook call resuming waiting tasks (webhook-event.ts), a connection
 * change (a new mail) resuming the watches it matches (change-dispatch.ts), a background
 * activation's candidates going through the notification filter (proactive.ts), the per-person
 * daily model budget every model call made for a person is counted against (model-budget.ts), and
 * the core tools (goals, wake-ups, memory). Each flow is a module a reader follows top to bottom.
 */
export { ApprovalFlow, approvalExpiryJobName } from "./approval-resume.js";
export { ChangeDispatcher, type ChangeKinds } from "./change-dispatch.js";
export { coreTools } from "./core-tools.js";
export { GoalControl, type GoalActionResult, type GoalControlDeps } from "./goal-control.js";
export { ModelBudget, budgetReachedText, localDay, type BudgetState } from "./model-budget.js";
export { ProactiveFlow } from "./proactive.js";
export { TaskRunner } from "./task-runner.js";
export { WakeupFlow } from "./wakeup.js";
export { WebhookEvents, type HookEventResult } from "./webhook-event.js";
export { type Hook, type NewHook } from "./records.js";
