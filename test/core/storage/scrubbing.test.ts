import { describe, expect, it } from "vitest";
import { SecretRegistry } from "../../../core/log/redaction.js";
import { scrubbingStore } from "../../../core/storage/scrubbing.js";
import { storeWithPerson } from "../sentinel/helpers.js";

const BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ";
const API_KEY = "config-api-key-VALUE-7781";

describe("scrubbingStore: error fields, audit rows and the journal never hold a token", () => {
  it("scrubs audit rows and a failed task's error; other writes pass unchanged", async () => {
    const { store: raw, personId } = await storeWithPerson();
    const registry = new SecretRegistry([API_KEY]);
    const store = scrubbingStore(raw, registry.scrubDeep);
    const now = new Date();
    await store.audit.appendAudit({ personId, kind: "platform.error", summary: `Telegram: 401 for https://api.telegram.org/bot${BOT_TOKEN}/sendMessage`, data: { body: `Authorization: Bearer ${API_KEY}`, b64: Buffer.from(API_KEY).toString("base64") }, at: now });
    const task = await store.tasks.createTask({ personId, title: "t", kind: "turn" });
    expect(await store.tasks.claimTask({ taskId: task.id, owner: "proc:test", now, leaseMs: 30_000 })).not.toBeNull();
    await store.tasks.transitionTask({ taskId: task.id, owner: "proc:test", to: { status: "failed", error: `upstream said ${API_KEY}` }, now });
    const text = JSON.stringify([await raw.audit.listAudit(personId, { limit: 5 }), await raw.tasks.getTask(task.id)]);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(Buffer.from(API_KEY).toString("base64"));
    expect(text).not.toContain("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ");
    expect(text).toContain("[redacted]");
    // Ordinary writes are untouched (the proxy binds every other method to the real repository).
    expect((await store.persons.getPerson(personId))?.id).toBe(personId);
    await store.close();
  });
});
