/**
 * Connections an operator writes into FAMILIAR_CONFIG (`connections: [...]`), moved into the
 * persons' vaults at every start: each entry names its person (`local:ana`, `telegram:42` — made a
 * person when Familiar has not met them yet), its kind and password (`env:NAME` reads the variable),
 * and the kind's settings. An entry that cannot be used is reported in words and skipped; the others
 * still connect.
 */
import type { ConfiguredConnection } from "../config/index.js";
import type { PersonId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";
import type { Store } from "../storage/index.js";
import type { Connections } from "./connections.js";

/** What the import did: how many entries are connected, and each problem with its entry's number. */
export interface ImportReport {
  connected: number;
  problems: string[];
}

async function personFor(store: Pick<Store, "persons">, who: string): Promise<PersonId> {
  const at = who.indexOf(":");
  const channel = who.slice(0, at) as ChannelName;
  const accountId = who.slice(at + 1);
  const identity = await store.persons.findIdentity(channel, accountId);
  if (identity) return identity.personId;
  const person = await store.persons.createPerson({ displayName: accountId });
  await store.persons.addIdentity({ personId: person.id, channel, accountId, address: accountId });
  return person.id;
}

/** Imports the entries (idempotent: the same person, kind and label updates the connection). */
export async function importConfiguredConnections(
  entries: readonly ConfiguredConnection[],
  deps: { connections: Connections; store: Pick<Store, "persons">; env: Record<string, string | undefined> },
): Promise<ImportReport> {
  const report: ImportReport = { connected: 0, problems: [] };
  for (const [i, entry] of entries.entries()) {
    const where = `connections[${i}] (${entry.kind} for ${entry.person})`;
    const { person, kind, password, capabilities, ...settings } = entry;
    let secret: string | null = null;
    if (password?.startsWith("env:")) {
      const name = password.slice(4);
      secret = deps.env[name] ?? null;
      if (!secret) {
        report.problems.push(`${where}: its password is read from the environment variable ${name}, which is not set`);
        continue;
      }
    } else if (password) secret = password;
    const result = await deps.connections.connect({ personId: await personFor(deps.store, person), kind, settings, secret, ...(capabilities && { capabilities }), source: "config", test: false });
    if (result.ok) report.connected++;
    else report.problems.push(...result.problems.map((p) => `${where}: ${p}`));
  }
  return report;
}
