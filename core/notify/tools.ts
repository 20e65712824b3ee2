import type { Store } from "../storage/index.js";
import { defineTool, type ToolDefinition } from "../tools/index.js";
import { proposalSchema } from "./candidate.js";
import { compareMonitor } from "./monitor-state.js";
import { monitorStateSchema } from "./records.js";

/** Tool names (the runtime reads their journal entries, see `producers.ts`). */
export const proposeMessageToolName = "propose_message";
export const reportMonitorStateToolName = "report_monitor_state";

/**
 * The tools a background activation uses to talk to the notification filter:
 * `propose_message` (a message with validated fields: origin, urgency, needsAction, deadline, goal)
 * and `report_monitor_state` (what a monitor checked and the values it saw, so "unchanged" and
 * "trivial change" are decided by code). Neither sends anything: after the activation the runtime
 * hands the proposals to the filter; arguments are kept in the tool-call journal, so a crash
 * between the call and the end of the activation loses nothing.
 */
export function notifyTools(deps: { store: Pick<Store, "notifications"> }): ToolDefinition[] {
  return [
    defineTool({
      name: proposeMessageToolName,
      description:
        "In background work (a wake-up or check-in), propose a message to the person and say what it is. The notification filter decides whether it is sent now, held for the digest, or dropped (repeats, small talk and unchanged status are dropped). Use once per distinct message; then end with NOTHING_TO_REPORT. In a conversation, just answer instead.",
      parameters: proposalSchema,
      sideEffect: false,
      backgroundOnly: true,
      capability: "notify.propose",
      async execute(args) {
        return {
          ok: true,
          content: `Proposed (${args.origin}, urgency ${args.urgency}${args.needsAction ? ", needs action" : ""}). The notification filter decides after this activation; do not repeat the message in your final answer.`,
        };
      },
    }),
    defineTool({
      name: reportMonitorStateToolName,
      description:
        "When watching something (a price, a status, a page), report what you checked and the values you saw, with the same `subject` every time. Code compares them with the last report the person received: an unchanged state or a change below `thresholds` (absolute, per field; default 1%) is never sent; crossing a `targets` level always counts.",
      parameters: monitorStateSchema,
      sideEffect: false,
      backgroundOnly: true,
      capability: "notify.monitor",
      async execute(args, ctx) {
        const last = await deps.store.notifications.lastMonitorReport(ctx.personId, args.subject);
        if (!last?.monitor) return { ok: true, content: `Recorded. The person has not been told about "${args.subject}" before.` };
        const change = compareMonitor(last.monitor, args);
        const told = last.at.toISOString();
        return {
          ok: true,
          content:
            change.change === "significant"
              ? `Recorded: significant change since the person was last told (${told}): ${change.detail}. Propose a message if it matters to them.`
              : `Recorded: ${change.detail} since the person was last told (${told}). Nothing to send; answer NOTHING_TO_REPORT.`,
        };
      },
    }),
  ];
}
