import { Router } from "express";
import { z } from "zod";
import { asId } from "../../core/ids.js";
import type { Store } from "../../core/storage/index.js";
import type { SentinelViews } from "../../core/sentinel/index.js";
import { ACTIVITY_CATEGORIES } from "../shared/index.js";
import { activityLines, type ActivityLine } from "./activity-lines.js";
import { webContext } from "./auth.js";
import { plainErrors } from "./plain-errors.js";

const query = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(200).optional(),
  kind: z.string().regex(/^[a-z._]{1,60}$/).optional(),
  category: z.enum(ACTIVITY_CATEGORIES.map((c) => c.id) as [string, ...string[]]).optional(),
  goal: z.string().max(100).optional(),
});

/**
 * `GET /api/web/activity?limit&after&category&kind&goal`: the signed-in person's Activity lines (one
 * per action, in sentences; activity-lines.ts), newest first, optionally one human category
 * (`ACTIVITY_CATEGORIES`), one audit kind or one goal's tasks. Answers `{ items, next, status }`; 400
 * for a bad query, 404 for a goal that is not theirs.
 */
export function activityApi(deps: { store: Store; familiar: { views: SentinelViews } }): Router {
  const { store, familiar } = deps;
  const router = Router();
  router.get("/api/web/activity", async (req, res) => {
    const parsed = query.safeParse(req.query);
    if (!parsed.success) return void res.status(400).json({ error: plainErrors(parsed.error) });
    const q = parsed.data;
    const { person } = webContext(req);
    let taskIds: Set<string> | null = null;
    if (q.goal) {
      const goal = await store.goals.getGoal(asId("goal", q.goal));
      if (!goal || goal.personId !== person.id) return void res.status(404).json({ error: "No such goal of yours." });
      taskIds = new Set((await store.tasks.listTasks({ goalId: goal.id }, { limit: 500 })).items.map((t) => t.id));
    }
    const category = ACTIVITY_CATEGORIES.find((c) => c.id === q.category) ?? null;
    const kinds = q.kind ? [q.kind] : category ? [...category.kinds] : undefined;
    const keep = (line: ActivityLine) => (!taskIds || taskIds.has(line.taskId ?? "")) && (category?.id !== "problems" || line.problem) && (!category?.effects || line.decision === null || category.effects.includes(line.decision));
    // A filter reads on until a page is full (bounded), since the audit log is not indexed by goal or category.
    const items: ActivityLine[] = [];
    let after = q.after;
    let next: string | null = null;
    for (let round = 0; round < 10 && items.length < q.limit; round++) {
      const pageOf = await store.audit.listAudit(person.id, { limit: q.limit * 2, ...(after && { after }), ...(kinds && { kinds }) });
      items.push(...activityLines(pageOf.items).filter(keep));
      next = pageOf.next ?? null;
      if (!next) break;
      after = next;
    }
    res.json({ items: items.slice(0, q.limit), next, status: await familiar.views.currentStatus(person.id) });
  });

  return router;
}
