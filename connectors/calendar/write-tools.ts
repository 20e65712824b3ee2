/**
 * The calendar's write tools — `calendar_create`, `calendar_update`, `calendar_delete` — offered
 * when the person granted *write* on a CalDAV connection. Each one describes its exact change to
 * Sentinel (capability `calendar.write`, the calendar's URL as destination), which asks the person
 * with a card unless a grant covers it, and runs only the change that was judged (`write-plans.ts`).
 */
import { ActionUnavailableError, defineTool, type ToolContext, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import type { z } from "zod";
import { planDelete, planUpdate } from "./change-plans.js";
import { CalendarError, type CalendarErrorCode } from "./errors.js";
import { createArgsSchema, deleteArgsSchema, updateArgsSchema } from "./write-args.js";
import { planCreate, type CalendarWriteDeps, type WritePlan } from "./write-plans.js";

/** The tool error code of a calendar failure. */
export function calendarToolCode(code: CalendarErrorCode): "calendar_unavailable" | "calendar_conflict" | "calendar_read_only" | "not_found" | "too_large" {
  switch (code) {
    case "conflict":
      return "calendar_conflict";
    case "read_only":
      return "calendar_read_only";
    case "not_found":
      return "not_found";
    case "too_large":
      return "too_large";
    default:
      return "calendar_unavailable";
  }
}

type Planner<S extends z.ZodType> = (deps: CalendarWriteDeps, args: z.infer<S>, context: ToolContext) => Promise<WritePlan>;

function writeTool<S extends z.ZodType>(deps: CalendarWriteDeps, spec: { name: string; description: string; parameters: S; plan: Planner<S>; hardToUndo?: boolean }): ToolDefinition<S> {
  return defineTool({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    sideEffect: true,
    capability: "calendar.write",
    offered: (personId) => deps.connections.granted(personId, "write"),
    policy: {
      capability: "calendar.write",
      access: "write",
      destinationArgs: [],
      exfiltrationArgs: [],
      ...(spec.hardToUndo ? { hardToUndo: true } : {}),
      describe: async (args, context) => (await spec.plan(deps, spec.parameters.parse(args), context)).description,
    },
    async execute(args, context): Promise<ToolResult> {
      let plan: WritePlan;
      try {
        plan = await spec.plan(deps, args, context);
      } catch (error) {
        if (error instanceof ActionUnavailableError) return { ok: false, code: error.code, error: error.message };
        throw error;
      }
      if (context.action !== undefined && context.action.digest !== plan.description.digest) {
        return { ok: false, code: "calendar_changed", error: `The event or calendar changed since this was checked (now: ${plan.description.summary}). Nothing was done. List the calendar again and decide anew.` };
      }
      try {
        return await plan.perform(context);
      } catch (error) {
        if (error instanceof CalendarError) return { ok: false, code: calendarToolCode(error.code), error: error.message };
        throw error;
      }
    },
  });
}

/** `calendar_create`, `calendar_update` and `calendar_delete`. */
export function calendarWriteTools(deps: CalendarWriteDeps): ToolDefinition[] {
  return [
    writeTool(deps, {
      name: "calendar_create",
      description:
        "Create an event in one of the person's calendars (asks the person first). Times are local (the person's time zone): YYYY-MM-DDTHH:MM, or a date YYYY-MM-DD for an all-day event. Repetition as frequency, weekdays, count or a last date.",
      parameters: createArgsSchema,
      plan: planCreate,
    }),
    writeTool(deps, {
      name: "calendar_update",
      description:
        "Change an event listed by calendar_list (asks the person first). For a repeating event say scope \"occurrence\" (with the occurrence's start as listed) or \"series\". Only the fields given change; times are local.",
      parameters: updateArgsSchema,
      plan: planUpdate,
    }),
    writeTool(deps, {
      name: "calendar_delete",
      description: "Delete an event listed by calendar_list (asks the person first). For a repeating event say scope \"occurrence\" (with its start as listed) or \"series\".",
      parameters: deleteArgsSchema,
      plan: planDelete,
      hardToUndo: true,
    }),
  ];
}
