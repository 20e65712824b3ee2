import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IllegalTransitionError, StoreUnavailableError } from "../../../core/errors.js";
import { type Migration, ftsQuery, migrate, migrations, openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import { raceClaims } from "./claim-race.js";
import { describeStoreContract } from "./contract.js";
import { at } from "./contract/support.js";

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "familiar-sqlite-"));
}

describeStoreContract("sqlite", async () => {
  const dir = tempDir();
  const store = openSqliteStore({ path: join(dir, "nested", "familiar.db") });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe("sqlite store specifics", () => {
  let dir: string;
  let path: string;
  const open: SqliteStore[] = [];
  const openStore = (extra: Partial<Parameters<typeof openSqliteStore>[0]> = {}) => {
    const store = openSqliteStore({ path, ...extra });
    open.push(store);
    return store;
  };

  beforeEach(() => {
    dir = tempDir();
    path = join(dir, "data", "familiar.db");
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("opening", () => {
    it("creates the parent directory and configures WAL, busy timeout, foreign keys and synchronous=NORMAL", () => {
      const store = openStore({ busyTimeoutMs: 1234 });
      expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(store.db.pragma("busy_timeout", { simple: true })).toBe(1234);
      expect(store.db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(store.db.pragma("synchronous", { simple: true })).toBe(1);
    });

    it("leaves a connection it was given open on close, and closes its own", async () => {
      const db = new Database(join(dir, "given.db"));
      const given = openSqliteStore({ db });
      await given.close();
      expect(db.open).toBe(true);
      db.close();

      const own = openSqliteStore({ path });
      await own.close();
      expect(own.db.open).toBe(false);
      await own.close();
      expect(await own.health()).toMatchObject({ ok: false, kind: "sqlite" });
      await expect(own.persons.createPerson({ displayName: "x" })).rejects.toBeInstanceOf(StoreUnavailableError);
    });

    it("refuses a person reference that does not exist (foreign keys are on)", async () => {
      const store = openStore();
      await expect(store.tasks.createTask({ kind: "wakeup", personId: "per_nobody" as never, title: "t" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    });
  });

  describe("migrations", () => {
    // Versions past Familiar's own history, so these tests keep working as migrations are added.
    const latest = migrations.at(-1)!.version;
    const extra: Migration = { version: latest + 1, name: "add pets", up: (db) => db.exec("CREATE TABLE pets (name TEXT)") };

    it("records each applied migration and re-applies nothing on reopen", async () => {
      const first = openStore();
      expect(first.migration).toEqual({ applied: migrations.map((m) => m.version), current: latest });
      const rows = first.db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all() as { version: number; name: string; applied_at: number }[];
      expect(rows.map((r) => [r.version, r.name])).toEqual(migrations.map((m) => [m.version, m.name]));
      expect(rows[0]!.applied_at).toBeGreaterThan(Date.UTC(2020, 0, 1));
      await first.persons.createPerson({ displayName: "kept" });
      await first.close();

      const again = openStore();
      expect(again.migration.applied).toEqual([]);
      const grown = openStore({ migrations: [...migrations, extra] });
      expect(grown.migration).toEqual({ applied: [latest + 1], current: latest + 1 });
      expect((await grown.persons.listPersons()).items.map((p) => p.displayName)).toEqual(["kept"]);
      grown.db.exec("INSERT INTO pets VALUES ('Rex')");
      expect(openStore({ migrations: [...migrations, extra] }).migration.applied).toEqual([]);
    });

    it("rolls back a failing migration alone and keeps the earlier ones", () => {
      const db = new Database(join(dir, "m.db"));
      const broken: Migration = {
        version: latest + 2,
        name: "half done",
        up: (d) => {
          d.exec("CREATE TABLE half (x)");
          d.exec("THIS IS NOT SQL");
        },
      };
      expect(() => migrate(db, [...migrations, extra, broken])).toThrow(StoreUnavailableError);
      const versions = db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all();
      expect(versions).toEqual([...migrations.map((m) => m.version), latest + 1]);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half'").pluck().get()).toBe(0);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'pets'").pluck().get()).toBe(1);
      db.close();
    });

    it("rejects a list out of order and a database migrated by a newer version", () => {
      const db = new Database(join(dir, "m.db"));
      expect(() => migrate(db, [extra, ...migrations])).toThrow(/out of order/);
      migrate(db, [...migrations, extra]);
      expect(() => migrate(db, migrations)).toThrow(new RegExp(`schema version ${latest + 1} but this Familiar knows only up to ${latest}`));
      db.close();
    });
  });

  describe("task state machine trigger", () => {
    it("rejects an illegal status change made with raw SQL, and allows a legal one", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 1000 });
      await store.tasks.transitionTask({ taskId: task.id, owner: "A", to: { status: "done", result: "ok" }, now: at(1) });

      const raw = store.db.prepare("UPDATE tasks SET status = ?, lease_owner = NULL WHERE id = ?");
      expect(() => raw.run("running", task.id)).toThrow(/FAMILIAR_ILLEGAL_TRANSITION .* done running/);
      expect(() => raw.run("pending", task.id)).toThrow(expect.objectContaining({ code: "SQLITE_CONSTRAINT_TRIGGER" }));
      expect((await store.tasks.getTask(task.id))?.state).toEqual({ status: "done", result: "ok" });

      const other = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "o" });
      expect(() => store.db.prepare("UPDATE tasks SET status = 'failed', outcome = 'x' WHERE id = ?").run(other.id)).toThrow(/pending failed/);
      store.db.prepare("UPDATE tasks SET status = 'cancelled' WHERE id = ?").run(other.id);
      expect((await store.tasks.getTask(other.id))?.state).toEqual({ status: "cancelled", reason: null });
    });

    it("maps the trigger's abort to IllegalTransitionError with the task and both states", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      const error = await store.tasks.transitionTask({ taskId: task.id, owner: null, to: { status: "failed", error: "x" }, now: at(0) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IllegalTransitionError);
      expect(error).toMatchObject({ taskId: task.id, from: "pending", to: "failed" });
    });
  });

  describe("transactions", () => {
    it("keeps an outside write out of a failing transaction: it waits, then survives the rollback", async () => {
      const store = openStore();
      const insider = await store.persons.createPerson({ displayName: "insider" });
      const outsider = await store.persons.createPerson({ displayName: "outsider" });
      const events: string[] = [];
      let releaseTx!: () => void;
      const txMayEnd = new Promise<void>((resolve) => (releaseTx = resolve));
      let enteredTx!: () => void;
      const txEntered = new Promise<void>((resolve) => (enteredTx = resolve));

      const tx = store.transaction(async () => {
        await store.conversation.appendMessage({ personId: insider.id, role: "user", channel: "local", text: "in tx", taskId: null });
        enteredTx();
        await txMayEnd;
        events.push("tx ends");
        throw new Error("abort");
      });
      await txEntered;
      const outside = store.conversation
        .appendMessage({ personId: outsider.id, role: "user", channel: "local", text: "outside", taskId: null })
        .then((m) => {
          events.push("outside write done");
          return m;
        });
      // A fixed wait on purpose: it asserts that the outside write does NOT finish while the transaction is open.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(events).toEqual([]);
      releaseTx();
      await expect(tx).rejects.toThrow("abort");
      const written = await outside;
      expect(events).toEqual(["tx ends", "outside write done"]);
      expect(written.seq).toBe(1);
      expect(await store.conversation.lastSeq(outsider.id)).toBe(1);
      expect(await store.conversation.lastSeq(insider.id)).toBe(0);
    });

    it("runs calls made inside the transaction directly, across awaits, and serializes two transactions", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      const order: string[] = [];
      const run = (name: string) =>
        store.transaction(async () => {
          order.push(`${name} start`);
          await store.conversation.appendMessage({ personId: person.id, role: "user", channel: "local", text: name, taskId: null });
          // Work inside the transaction that takes a while (so the two overlap), not a wait of the test.
          await new Promise((resolve) => setTimeout(resolve, 10));
          await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "local", text: name, taskId: null });
          order.push(`${name} end`);
        });
      await Promise.all([run("A"), run("B")]);
      expect(order).toEqual(["A start", "A end", "B start", "B end"]);
      const texts = (await store.conversation.listRecentMessages(person.id, 10)).map((m) => m.text);
      expect(texts).toEqual(["A", "A", "B", "B"]);
    });

    it("undoes only a nested transaction whose error is caught", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      await store.transaction(async () => {
        await store.persons.updatePerson(person.id, { displayName: "outer" });
        await store
          .transaction(async () => {
            await store.persons.updatePerson(person.id, { locale: "fr-FR" });
            throw new Error("inner");
          })
          .catch(() => undefined);
        await store.persons.updatePerson(person.id, { timeZone: "Europe/Paris" });
      });
      expect(await store.persons.getPerson(person.id)).toMatchObject({ displayName: "outer", locale: "en-US", timeZone: "Europe/Paris" });
    });

    it("appends a message, checkpoints and enqueues atomically", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      const task = await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: "t" });
      await store.tasks.claimTask({ taskId: task.id, owner: "A", now: at(0), leaseMs: 10_000 });
      await expect(
        store.transaction(async () => {
          await store.conversation.appendMessage({ personId: person.id, role: "assistant", channel: "local", text: "step", taskId: task.id });
          await store.tasks.saveCheckpoint({ taskId: task.id, owner: "A", cursor: 1, checkpoint: { s: 1 }, now: at(1), leaseMs: 10_000 });
          await store.outbox.enqueueOutbound({ personId: person.id, deliveryKey: "dup", text: "x" }, at(1));
          await store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: "k", tool: "t", args: null, sideEffect: false });
          await store.journal.recordIntent({ taskId: task.id, step: 1, idempotencyKey: "k", tool: "t", args: null, sideEffect: false });
        }),
      ).rejects.toMatchObject({ code: "DUPLICATE" });
      expect(await store.conversation.lastSeq(person.id)).toBe(0);
      expect((await store.tasks.getTask(task.id))?.cursor).toBe(0);
      expect((await store.outbox.listOutbound(person.id)).items).toEqual([]);
      expect(await store.journal.getEntry("k")).toBeNull();
    });
  });

  describe("memory search query", () => {
    it("quotes every word and drops FTS5 syntax", () => {
      expect(ftsQuery('green "tea" OR *')).toBe('"green" OR "tea" OR "or"');
      expect(ftsQuery("NEAR(a b) -c ^d e:f")).toBe('"near" OR "a" OR "b" OR "c" OR "d" OR "e" OR "f"');
      expect(ftsQuery("  \"' * ")).toBeNull();
      expect(ftsQuery("Crème brûlée")).toBe('"crème" OR "brûlée"');
    });
  });

  describe("two processes on one file", () => {
    it("never lets two processes claim the same task", async () => {
      const store = openStore();
      const person = await store.persons.createPerson({ displayName: "p" });
      const ids = new Set<string>();
      await store.transaction(async () => {
        for (let i = 0; i < 600; i++) ids.add((await store.tasks.createTask({ kind: "wakeup", personId: person.id, title: `t${i}` })).id);
      });
      const reports = await raceClaims(path, ["P1", "P2"]);
      const all = reports.flatMap((r) => r.claimed);
      expect(all).toHaveLength(ids.size);
      expect(new Set(all)).toEqual(ids);
      for (const report of reports) expect(report.claimed.length).toBeGreaterThan(0);
      const done = await store.tasks.listTasks({ personId: person.id, status: ["done"] }, { limit: 500 });
      for (const task of done.items) {
        const report = reports.find((r) => r.claimed.includes(task.id));
        expect(task.state).toEqual({ status: "done", result: report?.owner });
      }
    }, 60_000);
  });
});
