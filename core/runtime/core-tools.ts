import { z } from "zod";
import type { Clock } from "../clock.js";
import { asId, type GoalId, type PersonId } from "../ids.js";
import {
  checkinCheckpoint,
  wakeupCheckpoint,
  wakeupSpecSchema,
  jobProvenance,
  type WakeupCheckpoint,
} from "../tasks/index.js";
import type { Store } from "../storage/index.js";
import type { Goal } from "../goals/records.js";
import type { Json } from "../json.js";
import type { Taint } from "../policy/records.js";
import type { Task } from "../tasks/records.js";
import {
  type ToolErrorCode,
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../tools/index.js";
import { isValidTimeZone, nextCronTime } from "../time/index.js";

const timeZone = z.string().refine(isValidTimeZone, "an IANA time zone such as Europe/Berlin");
const cronSpec = z.object({ cron: z.string().min(9).max(100), timezone: timeZone });

/** Reads a task's wake-up spec (null for other tasks or an unreadable checkpoint). */
export function wakeupSpecOf(task: Task): WakeupCheckpoint | null {
  if (task.kind !== "wakeup") return null;
  const parsed = wakeupSpecSchema.safeParse(task.checkpoint);
  return parsed.success ? parsed.data : null;
}

/** What the core tools need besides the store and the clock. */
export interface CoreToolsDeps {
  store: Store;
  clock: Clock;
  /** Wakes the task loop (a wake-up or check-in task was created). */
  poke: () => void;
  /** Releases tasks held while a goal was paused (the goal is active again). */
  releaseHeld: (personId: PersonId, goalId: GoalId) => Promise<number>;
}

/** The taint a persistence tool stores with what it makes (null: the activation read nothing untrusted). */
function taintOf(ctx: ToolContext): Taint | null {
  return ctx.tainted === true ? { source: ctx.taintSource ?? "outside content" } : null;
}

/** A create/update_goal call that sets a recurring check-in (a job). */
function hasCheckIn(args: unknown): boolean {
  return typeof args === "object" && args !== null && "checkIn" in args && args.checkIn != null;
}

const ok = (content: string, data?: Json): ToolResult => ({ ok: true, content, ...(data === undefined ? {} : { data }) });
const fail = (code: ToolErrorCode, error: string): ToolResult => ({ ok: false, code, error });

function goalView(g: Goal) {
  return { id: g.id, title: g.title, description: g.description, status: g.status, notes: g.notes, checkIn: g.checkIn && { cron: g.checkIn.cron, timezone: g.checkIn.timeZone } };
}

/**
 * The core tools every activation has: goals, wake-ups and memory. Names are fixed (the model and
 * the tests rely on them): create_goal, update_goal, list_goals, schedule_wakeup, cancel_wakeup,
 * remember, forget.
 */
export function coreTools(deps: CoreToolsDeps): ToolDefinition[] {
  const { store, clock } = deps;

  /**
   * A goal's check-in is one long-lived task that cycles waiting → running → waiting, due at each
   * occurrence of its cron in the goal's time zone (the task row holds the next time). Changing the
   * schedule replaces the task; ending the goal cancels it; pausing holds it until the goal resumes.
   */
  async function scheduleCheckIn(goal: Goal, changed: boolean, ctx: ToolContext): Promise<void> {
    const now = clock.now();
    const ending = goal.status === "done" || goal.status === "abandoned";
    if (!changed && !ending) return;
    const open = await store.tasks.listTasks({ goalId: goal.id, status: ["pending", "waiting"] }, { limit: 100 });
    for (const t of open.items.filter((t) => t.kind === "checkin")) {
      await store.tasks.transitionTask({ taskId: t.id, owner: null, to: { status: "cancelled", reason: ending ? `goal ${goal.status}` : "check-in rescheduled" }, now });
    }
    if (!goal.checkIn || ending) return;
    const first = nextCronTime(goal.checkIn.cron, goal.checkIn.timeZone, now);
    await store.tasks.createTask({
      personId: goal.personId,
      goalId: goal.id,
      kind: "checkin",
      title: `check-in: ${goal.title}`,
      checkpoint: checkinCheckpoint({ cron: goal.checkIn.cron, timeZone: goal.checkIn.timeZone, provenance: jobProvenance(ctx) }),
      notBefore: first,
    });
    deps.poke();
  }

  const ownGoal = async (personId: string, goalId: string): Promise<Goal | null> => {
    const goal = await store.goals.getGoal(asId("goal", goalId));
    return goal && goal.personId === personId ? goal : null;
  };

  return [
    defineTool({
      name: "create_goal",
      description: "Create a long-lived goal for the person (e.g. 'watch for a cheaper flight to Lisbon'). Optionally with a recurring check-in (cron in an IANA time zone).",
      parameters: z.object({
        title: z.string().min(1).max(200),
        description: z.string().max(4_000).optional(),
        checkIn: cronSpec.optional().describe("recurring check-in, e.g. {cron: '0 9 * * 5', timezone: 'Europe/Berlin'}"),
      }),
      sideEffect: true,
      transactional: true,
      capability: "goals.write",
      persists: { kind: "goal", method: "CREATE GOAL", createsJob: (args) => hasCheckIn(args) },
      async execute(args, ctx) {
        const goal = await store.goals.createGoal({
          personId: ctx.personId,
          title: args.title,
          description: args.description ?? "",
          originMessageId: ctx.originMessageId ? asId("message", ctx.originMessageId) : null,
          checkIn: args.checkIn ? { cron: args.checkIn.cron, timeZone: args.checkIn.timezone } : null,
          taint: taintOf(ctx),
        });
        try {
          await scheduleCheckIn(goal, true, ctx);
        } catch (err) {
          await store.goals.updateGoal(goal.id, { checkIn: null });
          return fail("invalid_schedule", `goal ${goal.id} created without check-in: ${(err as Error).message}`);
        }
        return ok(`created goal ${goal.id}`, goalView(goal));
      },
    }),
    defineTool({
      name: "update_goal",
      description: "Change a goal: title, description, notes, status (active, paused, done, abandoned) or its check-in (null removes it).",
      parameters: z.object({
        goalId: z.string().min(1),
        title: z.string().min(1).max(200).optional(),
        description: z.string().max(4_000).optional(),
        notes: z.string().max(8_000).optional(),
        status: z.enum(["active", "paused", "done", "abandoned"]).optional(),
        checkIn: cronSpec.nullable().optional(),
      }),
      sideEffect: true,
      transactional: true,
      capability: "goals.write",
      persists: { kind: "goal", method: "CHANGE GOAL", createsJob: (args) => hasCheckIn(args) },
      async execute(args, ctx) {
        const goal = await ownGoal(ctx.personId, args.goalId);
        if (!goal) return fail("not_found", `no goal ${args.goalId}`);
        const updated = await store.goals.updateGoal(goal.id, {
          ...(args.title !== undefined && { title: args.title }),
          ...(args.description !== undefined && { description: args.description }),
          ...(args.notes !== undefined && { notes: args.notes }),
          ...(args.status !== undefined && { status: args.status }),
          ...(args.checkIn !== undefined && { checkIn: args.checkIn && { cron: args.checkIn.cron, timeZone: args.checkIn.timezone } }),
          ...(ctx.tainted === true && { taint: taintOf(ctx) }),
        });
        try {
          await scheduleCheckIn(updated, args.checkIn !== undefined, ctx);
        } catch (err) {
          return fail("invalid_schedule", `goal updated, but its check-in could not be scheduled: ${(err as Error).message}`);
        }
        if (goal.status === "paused" && updated.status === "active") await deps.releaseHeld(ctx.personId, updated.id);
        return ok(`updated goal ${updated.id}`, goalView(updated));
      },
    }),
    defineTool({
      name: "list_goals",
      description: "List the person's goals (default: active and paused) with their scheduled wake-ups.",
      parameters: z.object({ status: z.array(z.enum(["active", "paused", "done", "abandoned"])).optional() }),
      sideEffect: false,
      capability: "goals.read",
      async execute(args, ctx) {
        const goals = await store.goals.listGoals(ctx.personId, { status: args.status ?? ["active", "paused"] }, { limit: 100 });
        const tasks = await store.tasks.listTasks({ personId: ctx.personId, status: ["pending", "waiting"] }, { limit: 200 });
        const wakeups = tasks.items
          .map((t) => ({ t, spec: wakeupSpecOf(t) }))
          .filter((x) => x.spec)
          .map(({ t, spec }) => ({
            id: t.id,
            goalId: t.goalId,
            note: spec!.note,
            notify: spec!.notify,
            timing: spec!.timing,
            // Issue 11: made from outside content (its activations start tainted), and its job-chain depth.
            fromOutside: spec!.provenance?.tainted === true ? (spec!.provenance.source ?? "outside content") : null,
            depth: spec!.provenance?.depth ?? 1,
          }));
        const data = { goals: goals.items.map(goalView), wakeups } as unknown as Json;
        return ok(JSON.stringify(data), data);
      },
    }),
    defineTool({
      name: "schedule_wakeup",
      description:
        "Wake yourself up later to act or remind the person. Give either `at` (ISO-8601 with offset, e.g. 2026-12-01T09:00:00+01:00) or `cron` with `timezone`. notify 'always' delivers whatever you say then (reminders the person asked for); 'if_worthwhile' lets the notification filter decide.",
      parameters: z
        .object({
          note: z.string().min(1).max(1_000),
          at: z.iso.datetime({ offset: true }).optional(),
          cron: z.string().min(9).max(100).optional(),
          timezone: timeZone.optional(),
          goalId: z.string().optional(),
          notify: z.enum(["always", "if_worthwhile"]).default("if_worthwhile"),
        })
        .refine((a) => (a.at !== undefined) !== (a.cron !== undefined), "give exactly one of `at` or `cron`")
        .refine((a) => a.cron === undefined || a.timezone !== undefined, "`cron` needs `timezone`"),
      sideEffect: true,
      transactional: true,
      capability: "wakeups.write",
      persists: { kind: "wakeup", method: "SCHEDULE", createsJob: () => true },
      async execute(args, ctx) {
        if (args.goalId && !(await ownGoal(ctx.personId, args.goalId))) return fail("not_found", `no goal ${args.goalId}`);
        const now = clock.now();
        if (args.at !== undefined && new Date(args.at).getTime() < now.getTime() - 60_000) {
          return fail("in_the_past", `${args.at} is in the past (now is ${now.toISOString()})`);
        }
        let firstAt: Date;
        try {
          firstAt = args.at !== undefined ? new Date(args.at) : nextCronTime(args.cron!, args.timezone!, now);
        } catch (err) {
          return fail("invalid_schedule", `invalid cron expression: ${(err as Error).message}`);
        }
        const task = await store.tasks.createTask({
          personId: ctx.personId,
          goalId: args.goalId ? asId("goal", args.goalId) : null,
          kind: "wakeup",
          title: args.note,
          checkpoint: wakeupCheckpoint({
            note: args.note,
            notify: args.notify,
            timing: args.at !== undefined ? { at: args.at } : { cron: args.cron!, timezone: args.timezone! },
            provenance: jobProvenance(ctx),
          }),
          notBefore: firstAt,
        });
        deps.poke();
        return ok(`scheduled wake-up ${task.id}, next at ${firstAt.toISOString()}`, { wakeupId: task.id, nextAt: firstAt.toISOString() });
      },
    }),
    defineTool({
      name: "cancel_wakeup",
      description: "Cancel a scheduled wake-up by its id.",
      parameters: z.object({ wakeupId: z.string().min(1) }),
      sideEffect: true,
      transactional: true,
      capability: "wakeups.write",
      persists: { kind: "wakeup", method: "CANCEL", createsJob: () => false },
      async execute(args, ctx) {
        const task = await store.tasks.getTask(asId("task", args.wakeupId));
        if (!task || task.personId !== ctx.personId || task.kind !== "wakeup") return fail("not_found", `no wake-up ${args.wakeupId}`);
        if (task.state.status === "pending" || task.state.status === "waiting") {
          await store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "cancelled", reason: "cancelled by request" }, now: clock.now() });
        }
        return ok(`cancelled wake-up ${task.id}`);
      },
    }),
    defineTool({
      name: "remember",
      description: "Remember something durable about the person: a fact, preference, relationship or decision. Not for task progress.",
      parameters: z.object({
        kind: z.enum(["fact", "preference", "relationship", "decision"]),
        text: z.string().min(1).max(1_000),
        confidence: z.number().min(0).max(1).default(0.9),
        expiresAt: z.iso.datetime({ offset: true }).optional(),
      }),
      sideEffect: true,
      transactional: true,
      capability: "memory.write",
      persists: { kind: "memory", method: "REMEMBER", createsJob: () => false },
      async execute(args, ctx) {
        const origin = ctx.originMessageId ? await store.conversation.getMessage(asId("message", ctx.originMessageId)) : null;
        const item = await store.memory.addMemory({
          personId: ctx.personId,
          kind: args.kind,
          text: args.text,
          confidence: args.confidence,
          expiresAt: args.expiresAt ? new Date(args.expiresAt) : null,
          provenance: { messageId: origin?.id ?? null, channel: origin?.channel ?? null, note: null },
          taint: taintOf(ctx),
        });
        return ok(`remembered ${item.id}`, { memoryId: item.id });
      },
    }),
    defineTool({
      name: "forget",
      description: "Forget a memory item by its id (shown in your context as mem_…).",
      parameters: z.object({ memoryId: z.string().min(1) }),
      sideEffect: true,
      transactional: true,
      capability: "memory.write",
      persists: { kind: "memory", method: "FORGET", createsJob: () => false },
      async execute(args, ctx) {
        const removed = await store.memory.deleteMemory(ctx.personId, asId("memory", args.memoryId));
        return removed ? ok(`forgot ${args.memoryId}`) : fail("not_found", `no memory item ${args.memoryId}`);
      },
    }),
  ];
}
