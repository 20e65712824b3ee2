/**
 * Connection change → resume: a sync recorded changes (new mail); every watch — a wake-up that
 * waits on its connections (`timing.on`, waiting `{ kind: "change", afterSeq }`) — is resumed by the
 * first recorded change after its `afterSeq` that its filter matches. Matching is the connection
 * kind's own deterministic function: a change nobody's filter matches wakes no model and costs a
 * query. The change goes into the task as an untrusted observation (the activation is tainted).
 *
 * Watch-centred, per person, so nothing is missed: when a watch re-arms after an activation (waiting
 * after the change that started it), changes that arrived meanwhile are found on the next pass.
 * Passes run when a sync commits or a watch re-arms (`poke(personId)`), and every `intervalMs` for
 * every person with undispatched changes or waiting watches (what a lost poke would have done).
 */
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { ConnectionChange } from "../connections/records.js";
import type { Json } from "../json.js";
import type { Store } from "../storage/index.js";
import type { Task } from "../tasks/records.js";
import { parseCheckpoint, type OnChange, type Trigger } from "../tasks/index.js";

/** What a connection kind says about its changes (the email connector for `email`). */
export interface ChangeKinds {
  /** The change kind watches of connection kind `kind` wait for (`email.arrived`), or null when it has none. */
  changeKind(kind: string): string | null;
  /** Whether `change` matches `filter` (the watch's, validated by the kind). Pure and deterministic. */
  matches(kind: string, filter: Json, change: ConnectionChange): boolean;
  /** What the woken activation is told about the change: an untrusted observation. */
  observe(kind: string, change: ConnectionChange): { source: string; text: string };
}

export interface ChangeDispatchDeps {
  store: Pick<Store, "changes" | "connections" | "tasks" | "audit">;
  clock: Clock;
  kinds: ChangeKinds;
  logger: Logger;
  /** Wakes the task loop (a resumed watch is due at once). */
  pokeTasks: () => void;
  /** Changes read per watch and pass (default 200). */
  batch?: number;
}

interface Watch {
  task: Task;
  afterSeq: number;
  on: OnChange;
}

export class ChangeDispatcher {
  private readonly queued = new Set<PersonId>();
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ChangeDispatchDeps) {}

  /** Asks for a pass over one person's watches (after a sync commit or a watch re-armed). */
  poke(personId: PersonId): void {
    this.queued.add(personId);
    this.kick();
  }

  /** Starts the safety-net pass every `intervalMs` (default 30 s) and runs one now. */
  start(intervalMs = 30_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), intervalMs);
    this.timer.unref();
    this.sweep();
  }

  /** Stops the timer and waits for a running pass. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Resolves when no pass is running or queued (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private sweep(): void {
    this.persons()
      .then((ids) => {
        for (const id of ids) this.queued.add(id);
        this.kick();
      })
      .catch((err: unknown) => this.deps.logger.warn({ err }, "change dispatch: could not list persons to check"));
  }

  /** Persons with undispatched changes, and persons with waiting watches. */
  private async persons(): Promise<PersonId[]> {
    const { store } = this.deps;
    const ids = new Set((await store.changes.listUndispatched(500)).map((c) => c.personId));
    for (const c of await store.connections.listConnections()) ids.add(c.personId);
    return [...ids];
  }

  private kick(): void {
    if (this.running) return;
    this.running = (async () => {
      while (this.queued.size > 0) {
        const [personId] = this.queued;
        this.queued.delete(personId!);
        try {
          await this.dispatchPerson(personId!);
        } catch (err) {
          this.deps.logger.warn({ err, personId }, "change dispatch failed for a person; retried on the next pass");
        }
      }
    })().finally(() => {
      this.running = null;
      if (this.queued.size > 0) this.kick();
    });
  }

  /** One pass over a person's watches. Returns how many it resumed. */
  async dispatchPerson(personId: PersonId): Promise<number> {
    const { store, clock, kinds } = this.deps;
    const watches = (await store.tasks.findWaitingTasks({ kind: "change", personId })).map(watchOf).filter((w): w is Watch => w !== null);
    const connections = new Map((await store.connections.listConnections({ personId })).map((c) => [c.id as string, c]));
    let resumed = 0;
    for (const watch of watches) {
      const changeKind = kinds.changeKind(watch.on.kind);
      if (!changeKind) continue;
      const candidates = await store.changes.listChangesAfter({ personId, kind: changeKind, afterSeq: watch.afterSeq, limit: this.deps.batch ?? 200 });
      const hit = candidates.find((c) => {
        const connection = connections.get(c.connectionId);
        return connection?.kind === watch.on.kind && (watch.on.connectionId === null || watch.on.connectionId === c.connectionId) && kinds.matches(watch.on.kind, watch.on.filter, c);
      });
      if (!hit) continue;
      const observation = kinds.observe(watch.on.kind, hit);
      const input: Trigger = { kind: "change", seq: hit.seq, connectionId: hit.connectionId, description: watch.on.description, observations: [observation] };
      const task = await store.tasks.resumeWaitingTask({ taskId: watch.task.id, wait: { kind: "change", afterSeq: watch.afterSeq }, input, now: clock.now() });
      if (!task) continue;
      resumed++;
      await store.audit.appendAudit({ personId, kind: "change.matched", summary: `a new ${changeKind} matched the watch "${watch.task.title}"`, data: { taskId: watch.task.id, seq: hit.seq, connectionId: hit.connectionId } });
    }
    for (const c of await store.changes.listUndispatched(500)) if (c.personId === personId) await store.changes.markDispatched(c.seq, clock.now());
    if (resumed > 0) this.deps.pokeTasks();
    return resumed;
  }
}

function watchOf(task: Task): Watch | null {
  if (task.state.status !== "waiting" || task.state.wait.kind !== "change" || task.kind !== "wakeup") return null;
  try {
    const checkpoint = parseCheckpoint(task);
    if (checkpoint.kind !== "wakeup" || !("on" in checkpoint.timing)) return null;
    return { task, afterSeq: task.state.wait.afterSeq, on: checkpoint.timing.on };
  } catch {
    return null;
  }
}
