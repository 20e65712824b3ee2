/**
 * `watch_calendar`: a task that waits for a calendar change matching a filter ("when the club adds a
 * fixture", "if my dentist appointment moves"). It is a wake-up on connection changes (the shared
 * watch mechanism: `timing.on`, waiting for changes after the latest one now), so matching is the
 * calendar kinds' deterministic filter — a change that matches nothing wakes no model — and the
 * change it wakes on reaches the activation as untrusted content.
 *
 * Like any job, it is judged by Sentinel as persistence (asked in a tainted activation, and from an
 * activation a job started).
 */
import { z } from "zod";
import type { PersonId } from "../../core/ids.js";
import type { Store } from "../../core/storage/index.js";
import { jobProvenance, wakeupCheckpoint } from "../../core/tasks/index.js";
import { defineTool, type ToolDefinition } from "../../core/tools/index.js";
import type { CalendarConnections } from "./connections.js";
import { calendarFilterSchema, filterWords } from "./watch-filter.js";

/** What the watch tool needs. */
export interface CalendarWatchDeps {
  store: Pick<Store, "tasks" | "changes">;
  connections: Pick<CalendarConnections, "list" | "granted">;
  /** Wakes the task loop. */
  poke(): void;
}

const argsSchema = calendarFilterSchema.extend({
  note: z.string().trim().min(1).max(1_000).describe("What to do (or tell the person) when such a change comes"),
  once: z.boolean().default(true).describe("Stop after the first matching change (false: keep watching)"),
  notify: z.enum(["always", "if_worthwhile"]).default("if_worthwhile"),
});

/** `watch_calendar`, offered when the person can read a calendar. */
export function calendarWatchTool(deps: CalendarWatchDeps): ToolDefinition {
  return defineTool({
    name: "watch_calendar",
    description:
      "Wait for a change in the person's calendars or followed calendar feeds (an event added, moved, cancelled, changed or removed), optionally only in some calendars or with words in the title; then you are woken with the change.",
    parameters: argsSchema,
    sideEffect: true,
    transactional: true,
    capability: "calendar.watch",
    offered: (personId: PersonId) => deps.connections.granted(personId, "read"),
    persists: { kind: "wakeup", method: "WATCH CALENDAR", createsJob: () => true },
    async execute(args, ctx) {
      const { note, once, notify, ...rest } = args;
      const filter = calendarFilterSchema.parse(rest);
      const readable = (await deps.connections.list(ctx.personId)).filter((c) => c.capabilities.read);
      const kinds = [...new Set(readable.map((c) => c.kind))].filter((k) => filter.source === undefined || (filter.source === "feed" ? k === "ics" : k === "caldav"));
      if (kinds.length === 0) return { ok: false, code: "denied", error: "No calendar is connected with read access for this (see /connect)." };
      const afterSeq = await deps.store.changes.latestSeq(ctx.personId);
      const description = filterWords(filter);
      const ids: string[] = [];
      for (const kind of kinds) {
        const task = await deps.store.tasks.createTask({
          personId: ctx.personId,
          kind: "wakeup",
          title: note,
          checkpoint: wakeupCheckpoint({ note, notify, timing: { on: { kind, connectionId: null, filter, once, description } }, provenance: jobProvenance(ctx) }),
          waitsFor: { kind: "change", afterSeq },
        });
        ids.push(task.id);
      }
      deps.poke();
      return { ok: true, content: `Watching: ${description}${once ? " (once)" : ""}. Watch ${ids.join(", ")}; cancel it with cancel_wakeup.`, data: { watchIds: ids } };
    },
  });
}
