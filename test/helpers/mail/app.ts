/**
 * The email end-to-end tests' app: Familiar in-process with ana's mailbox from FAMILIAR_CONFIG (its
 * password read from the environment), short sync sessions, and waits on what the sync recorded.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PersonId } from "../../../core/ids.js";
import { startTestApp, type TestApp } from "../app.js";
import { sleep } from "../e2e.js";
import { settingsFor, type MailServers } from "./servers.js";

/** Writes the FAMILIAR_CONFIG file: ana's mailbox with `capabilities`, password from ANA_MAIL_PASSWORD. */
export function mailConfigFile(servers: MailServers, capabilities: string[]): string {
  const s = settingsFor(servers, servers.accounts[0]);
  const file = join(tmpdir(), `familiar-email-${process.pid}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify({ connections: [{ person: "local:ana", kind: "email", password: "env:ANA_MAIL_PASSWORD", capabilities, address: s.address, name: "Ana", imap: s.imap, smtp: s.smtp }] }));
  return file;
}

/** Starts the app with ana's mailbox (`capabilities`), the scripted model at `modelUrl`, 3-second sync sessions; `env` adds settings. */
export async function startMailApp(servers: MailServers, modelUrl: string, capabilities: string[], dataDir?: string, env: Record<string, string> = {}): Promise<TestApp> {
  process.env.ANA_MAIL_PASSWORD = servers.accounts[0].password;
  return startTestApp({
    FAMILIAR_CONFIG: mailConfigFile(servers, capabilities),
    OPENAI_BASE_URL: modelUrl,
    NOTIFY_MODEL_JUDGEMENT: "false",
    EMAIL_SYNC_SESSION_MS: "3000",
    EMAIL_WATCHDOG_MS: "1000",
    EMAIL_POLL_MS: "500",
    ...(dataDir && { DATA_DIR: dataDir }),
    ...env,
  });
}

export async function personOf(app: TestApp, user: string): Promise<PersonId> {
  return (await app.store.persons.findIdentity("local", user))!.personId;
}

/** Waits until the mailbox's sync has run (its status shows a sync). */
export async function synced(app: TestApp, personId: PersonId): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    const [c] = await app.store.connections.listConnections({ personId });
    if (c?.status.lastSyncAt) return;
    if (Date.now() > end) throw new Error(`the mailbox did not sync: ${JSON.stringify(c?.status)}`);
    await sleep(100);
  }
}

/** Waits for the mail arrivals recorded for the person to reach `count`; returns their refs by subject. */
export async function arrivals(app: TestApp, personId: PersonId, count: number): Promise<Map<string, string>> {
  const end = Date.now() + 30_000;
  for (;;) {
    const list = await app.store.changes.listChangesAfter({ personId, kind: "email.arrived", afterSeq: 0, limit: 1000 });
    if (list.length >= count) return new Map(list.map((c) => [(c.data as { subject: string }).subject, (c.data as { ref: string }).ref]));
    if (Date.now() > end) throw new Error(`fewer than ${count} arrivals were recorded`);
    await sleep(100);
  }
}

/** Polls `probe` (sync or async) every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
