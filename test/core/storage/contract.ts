/**
 * The store contract: one suite every `Store` adapter must pass (SQLite, MongoDB). It speaks only
 * the public ports in core/storage/ports.ts, so a behaviour checked here is a behaviour core code may
 * rely on whatever the adapter.
 *
 * Usage, in an adapter's test file:
 *
 *   describeStoreContract("sqlite", async () => {
 *     const store = openSqliteStore({ path: tmpFile });
 *     return { store, cleanup: async () => { await store.close(); rmSync(tmpFile); } };
 *   });
 *
 * The factory is called before each test and must return an empty store; `cleanup` runs after it.
 *
 * Where the ports leave room, the suite pins these behaviours down (every adapter must agree):
 * - Pages: default 50 items, a larger `limit` is cut to 500, a cursor the store did not make is a
 *   ValidationError (code VALIDATION).
 * - Leases: the holder is the lease owner until another worker claims the task / message; a lapsed
 *   lease nobody took over still lets its owner finish. A running task changes state only under its
 *   lease (even a cancel with `owner: null` is a ConflictError).
 * - A pending task without `notBefore` is due whatever `now` the caller passes.
 * - Outbox `attempts` counts claims (1 after the first claim, 2 after a reclaim or retry).
 * - `consumeGrant` consumes only `once` grants; any other scope returns false and stays active.
 * - `decideApproval` at `now >= expiresAt` marks the request expired.
 * - `listNotificationsSince` includes decisions made exactly at `since`.
 */
import { afterEach, beforeEach, describe } from "vitest";
import type { Store } from "../../../core/storage/ports.js";
import { artifactsContract } from "./contract/artifacts.js";
import { authorizationContract } from "./contract/authorization.js";
import { connectionsContract } from "./contract/connections.js";
import { conversationContract } from "./contract/conversation.js";
import { hooksContract } from "./contract/hooks.js";
import { journalMemoryContract } from "./contract/journal-memory.js";
import { miscContract } from "./contract/misc.js";
import { outboxContract } from "./contract/outbox.js";
import { personsContract } from "./contract/persons.js";
import type { StoreFactory } from "./contract/support.js";
import { tasksContract } from "./contract/tasks.js";
import { turnsContract } from "./contract/turns.js";
import { usageContract } from "./contract/usage.js";
import { hookEventsContract } from "./contract/hook-events.js";

export type { StoreFactory } from "./contract/support.js";

/** Registers the whole contract suite under `describe(\`store contract: ${name}\`)`. */
export function describeStoreContract(name: string, factory: () => Promise<{ store: Store; cleanup(): Promise<void> }>): void {
  const make: StoreFactory = factory;
  describe(`store contract: ${name}`, () => {
    let current: { store: Store; cleanup(): Promise<void> } | undefined;
    beforeEach(async () => {
      current = await make();
    });
    afterEach(async () => {
      const done = current;
      current = undefined;
      await done?.cleanup();
    });
    const ctx = {
      store(): Store {
        if (!current) throw new Error("store contract: no store (the factory failed or the test ran outside beforeEach)");
        return current.store;
      },
    };
    personsContract(ctx);
    conversationContract(ctx);
    tasksContract(ctx);
    turnsContract(ctx);
    journalMemoryContract(ctx);
    authorizationContract(ctx);
    outboxContract(ctx);
    miscContract(ctx);
    hooksContract(ctx);
    artifactsContract(ctx);
    connectionsContract(ctx);
    usageContract(ctx);
    hookEventsContract(ctx);
  });
}
