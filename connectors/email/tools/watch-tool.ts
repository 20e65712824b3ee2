/**
 * `email_watch`: "tell me when the school writes about tryouts" — a watch on the person's mailboxes
 * with a structured filter (from, to, subject words, attachment, list, verified only). It is a
 * wake-up that waits on new mail (core/tasks `timing.on`): matching is deterministic, so mail that
 * does not match wakes nothing; a match starts an activation that is tainted (mail is untrusted)
 * and is told the mail's headers. `once` ends it after the first match; `goal_id` attaches it to a
 * goal (a goal watching the inbox). Sentinel: it makes a job, so from a tainted or job-started
 * activation it asks the person first.
 */
import { z } from "zod";
import { asId, type PersonId } from "../../../core/ids.js";
import { jobProvenance, wakeupCheckpoint } from "../../../core/tasks/index.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/index.js";
import type { Store } from "../../../core/storage/index.js";
import { describeMailFilter, mailFilterSchema } from "../watch-filter.js";
import { accountFor, fail, isResult, ok, type EmailToolDeps } from "./support.js";

export function watchTool(deps: EmailToolDeps & { store: Pick<Store, "changes" | "tasks" | "goals"> }): ToolDefinition {
  return defineTool({
    name: "email_watch",
    description:
      "Watch the person's mail for new messages matching a filter, and act or tell them when one arrives (e.g. from the school with 'tryouts' in the subject). notify 'always' tells them each time (what they asked for). Cancel with cancel_wakeup.",
    parameters: z.object({
      note: z.string().min(1).max(1_000).describe("What to do when a matching mail arrives"),
      filter: mailFilterSchema,
      once: z.boolean().default(false).describe("Stop after the first matching mail"),
      mailbox: z.string().max(320).optional().describe("Only this connected address (default: all the person's mailboxes)"),
      goal_id: z.string().optional(),
      notify: z.enum(["always", "if_worthwhile"]).default("always"),
    }),
    sideEffect: true,
    transactional: true,
    capability: "email.read",
    persists: { kind: "wakeup", method: "WATCH MAIL", createsJob: () => true },
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "read"),
    async execute(args, ctx) {
      const account = await accountFor(deps, ctx.personId, "read", args.mailbox);
      if (isResult(account)) return account;
      if (args.goal_id) {
        const goal = await deps.store.goals.getGoal(asId("goal", args.goal_id));
        if (!goal || goal.personId !== ctx.personId) return fail("not_found", `no goal ${args.goal_id}`);
      }
      const description = describeMailFilter(args.filter);
      const afterSeq = await deps.store.changes.latestSeq(ctx.personId);
      const task = await deps.store.tasks.createTask({
        personId: ctx.personId,
        goalId: args.goal_id ? asId("goal", args.goal_id) : null,
        kind: "wakeup",
        title: args.note,
        checkpoint: wakeupCheckpoint({
          note: args.note,
          notify: args.notify,
          timing: { on: { kind: "email", connectionId: args.mailbox ? account.connection.id : null, filter: args.filter, once: args.once, description } },
          provenance: jobProvenance(ctx),
        }),
        waitsFor: { kind: "change", afterSeq },
      });
      deps.pokeWatches(ctx.personId);
      return ok(`Watching ${args.mailbox ?? "the person's mail"} for new mail ${description} (watch ${task.id}${args.once ? ", once" : ""}).`, { data: { wakeupId: task.id } });
    },
  });
}
