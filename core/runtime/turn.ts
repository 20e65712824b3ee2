/**
 * Turns: a turn task answers a range of the person's messages. The range grows while the task is
 * pending (several quick messages get one answer) and is frozen once it is claimed — later messages
 * get a turn of their own. When a task is waiting for the person's reply, the turn hands its
 * messages over to that task instead of answering them itself.
 */
import type { Store } from "../storage/index.js";
import type { ConversationMessage } from "../conversation/records.js";
import type { Person } from "../persons/records.js";
import type { Task } from "../tasks/records.js";
import { turnSpecSchema, type TaskCheckpoint, type Trigger, type TurnCheckpoint } from "../tasks/index.js";

/** The person's messages an activation answers directly (null: it is background work). */
export function answerRange(checkpoint: TaskCheckpoint, origin: Trigger): { fromSeq: number; toSeq: number } | null {
  if (origin.kind === "reply") return { fromSeq: origin.fromSeq, toSeq: origin.toSeq };
  if (checkpoint.kind === "turn" && (origin.kind === "turn" || origin.kind === "recovery")) return { fromSeq: checkpoint.fromSeq, toSeq: checkpoint.toSeq };
  return null;
}

/** The last message of an answered range (where the answer goes, and the provenance of what is learnt). */
export async function answeredMessage(store: Pick<Store, "conversation">, person: Person, range: { toSeq: number }): Promise<ConversationMessage | null> {
  const [message] = await store.conversation.listMessagesBetween(person.id, range.toSeq, range.toSeq);
  return message ?? null;
}

/**
 * When a task of the person waits for their reply, resumes it with this turn's messages (the reply)
 * and closes the turn, in one transaction. Returns false when no task waits.
 */
export async function handOverToWaitingTask(
  deps: { store: Store; clock: { now(): Date }; owner: string; poke: () => void },
  turn: Task,
  checkpoint: TaskCheckpoint & TurnCheckpoint,
): Promise<boolean> {
  const { store, clock, owner } = deps;
  const [waiting] = await store.tasks.findWaitingTasks({ kind: "reply", personId: turn.personId });
  if (!waiting) return false;
  const handedOver = await store.transaction(async () => {
    const reply: Trigger = { kind: "reply", fromSeq: checkpoint.fromSeq, toSeq: checkpoint.toSeq };
    const resumed = await store.tasks.resumeWaitingTask({ taskId: waiting.id, wait: { kind: "reply" }, input: reply, now: clock.now() });
    if (!resumed) return false;
    await store.tasks.transitionTask({ taskId: turn.id, owner, to: { status: "done", result: `answered by task ${waiting.id}, which waited for this reply` }, now: clock.now() });
    return true;
  });
  if (handedOver) deps.poke();
  return handedOver;
}

/** The first of the person's messages still waiting for their turn (open turn tasks), or null when all are answered. */
export async function unansweredFrom(store: Pick<Store, "tasks">, person: Person): Promise<number | null> {
  const open = await store.tasks.listTasks({ personId: person.id, status: ["pending", "running"], kind: ["turn"] }, { limit: 50 });
  const starts = open.items.flatMap((t) => {
    const parsed = turnSpecSchema.safeParse(t.checkpoint);
    return parsed.success ? [parsed.data.fromSeq] : [];
  });
  return starts.length > 0 ? Math.min(...starts) : null;
}
