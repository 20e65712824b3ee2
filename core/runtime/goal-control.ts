import type { Clock } from "../clock.js";
import type { GoalId, PersonId } from "../ids.js";
import type { Goal, GoalStatus } from "../goals/records.js";
import type { Store } from "../storage/index.js";
import type { WakeupFlow } from "./wakeup.js";

/** What a goal action came to: the goal as it is now and a sentence for the person, or why nothing changed. */
export type GoalActionResult = { ok: true; goal: Goal; notice: string } | { ok: false; notice: string };

/** What `GoalControl` needs. */
export interface GoalControlDeps {
  store: Pick<Store, "goals" | "tasks">;
  clock: Clock;
  /** Releases what was held while paused (`WakeupFlow.releaseHeld`). */
  wakeups: Pick<WakeupFlow, "releaseHeld">;
  /** The task loop, poked when held work was released. */
  tasks: { poke(): void };
}

/**
 * A person's own goals paused, resumed or cancelled — the one implementation behind the `/goal`
 * command and the web app's goal buttons. Pausing holds the goal's wake-ups and check-ins (the
 * wake-up flow holds them when they come due); resuming releases what was held; cancelling marks the
 * goal abandoned and cancels its pending and waiting tasks.
 */
export class GoalControl {
  constructor(private readonly deps: GoalControlDeps) {}

  /** Pauses `goalId` of `personId`. */
  pause = (personId: PersonId, goalId: GoalId): Promise<GoalActionResult> => this.set(personId, goalId, "paused");

  /** Makes `goalId` active again and releases what was held for the person. */
  resume = (personId: PersonId, goalId: GoalId): Promise<GoalActionResult> => this.set(personId, goalId, "active");

  /** Abandons `goalId` and cancels its open tasks. */
  cancel = (personId: PersonId, goalId: GoalId): Promise<GoalActionResult> => this.set(personId, goalId, "abandoned");

  /** Releases every task held while the person (or one of their goals) was paused; resolves with how many. */
  releaseHeld = async (personId: PersonId): Promise<number> => {
    const released = await this.deps.wakeups.releaseHeld(personId);
    this.deps.tasks.poke();
    return released;
  };

  private async set(personId: PersonId, goalId: GoalId, status: Extract<GoalStatus, "paused" | "active" | "abandoned">): Promise<GoalActionResult> {
    const { store, clock } = this.deps;
    const goal = await store.goals.getGoal(goalId);
    if (!goal || goal.personId !== personId) return { ok: false, notice: `No goal ${goalId}.` };
    const updated = await store.goals.updateGoal(goal.id, { status });
    if (status === "abandoned") {
      const open = await store.tasks.listTasks({ goalId: goal.id, status: ["pending", "waiting"] }, { limit: 200 });
      for (const t of open.items) await store.tasks.transitionTask({ taskId: t.id, owner: null, to: { status: "cancelled", reason: "goal cancelled" }, now: clock.now() });
    }
    if (status === "active") await this.releaseHeld(personId);
    return { ok: true, goal: updated, notice: `Goal “${goal.title}” is now ${status}.` };
  }
}
