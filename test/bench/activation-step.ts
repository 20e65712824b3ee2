import { performance } from "node:perf_hooks";
import type { Store } from "../../core/storage/ports.js";
import { percentile, round } from "./measure.js";

/**
 * One durable activation step, measured the same way on every store: append a conversation
 * message, save the task checkpoint and enqueue an outbox row in one `store.transaction`. Returns
 * p50/p99 in µs and steps per second over `steps` steps after `warmup` ones. Throws when a step was
 * not persisted.
 */
export async function measureActivationSteps(store: Store, steps: number, warmup: number): Promise<{ p50_us: number; p99_us: number; steps_per_s: number }> {
  const person = await store.persons.createPerson({ displayName: "bench" });
  const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "bench task" });
  const leaseMs = 3_600_000;
  await store.tasks.claimTask({ taskId: task.id, owner: "bench", now: new Date(), leaseMs });
  const timings: number[] = [];
  for (let i = 0; i < warmup + steps; i++) {
    const started = performance.now();
    await store.transaction(async () => {
      await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "local", text: `step ${i} done`, taskId: task.id });
      await store.tasks.saveCheckpoint({
        taskId: task.id,
        owner: "bench",
        cursor: i + 1,
        checkpoint: { step: i, notes: ["fetched page", "compared prices"], cost: { tokens: 1200 + i } },
        now: new Date(),
        leaseMs,
      });
      await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: `${task.id}:${i}`, text: `Step ${i} finished.` }, new Date());
    });
    if (i >= warmup) timings.push((performance.now() - started) * 1000);
  }
  if ((await store.conversation.lastSeq(person.id)) !== warmup + steps) throw new Error("activation step bench: not every step was persisted");
  const total = timings.reduce((a, b) => a + b, 0);
  timings.sort((a, b) => a - b);
  return { p50_us: round(percentile(timings, 50)), p99_us: round(percentile(timings, 99)), steps_per_s: round(steps / (total / 1e6), 0) };
}
