/**
 * A person's connections: records in the store, credentials in the person's vault (bound to no
 * origin, so never substituted into a request and never shown), capabilities granted one by one.
 * What the model is offered follows the grants: `granted()` answers from memory, refreshed on
 * every change here and every `refreshMs` (another process may have changed them).
 */
import type { Clock } from "../clock.js";
import { NotFoundError } from "../errors.js";
import type { ConnectionId, PersonId } from "../ids.js";
import type { Logger } from "../log/index.js";
import type { SecretVault } from "../secrets/index.js";
import type { Connection, ConnectionStatus } from "./records.js";
import type { Store } from "../storage/index.js";
import type { ConnectionKind, ConnectionTest } from "./kinds.js";

/** The vault name of a connection's credential (owner: the person). */
export function connectionSecretName(id: ConnectionId): string {
  return `connection.${id}`;
}

/** What `connect` did: the connection (with the test, when one ran), or every problem in words. */
export type ConnectResult = { ok: true; connection: Connection; created: boolean; test: ConnectionTest | null } | { ok: false; problems: string[] };

export interface ConnectInput {
  personId: PersonId;
  kind: string;
  settings: unknown;
  /** The password or token; null keeps the stored one (an update that does not change it). */
  secret: string | null;
  capabilities?: string[];
  source: Connection["source"];
  /** Try it before keeping it (the forms do; FAMILIAR_CONFIG at start does not: its sync reports). */
  test: boolean;
}

export interface ConnectionsDeps {
  store: Pick<Store, "connections" | "audit">;
  vault: Pick<SecretVault, "set" | "delete" | "reveal">;
  clock: Clock;
  logger: Logger;
  kinds: readonly ConnectionKind[];
}

export class Connections {
  private readonly byKind: Map<string, ConnectionKind>;
  private grants = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ConnectionsDeps) {
    this.byKind = new Map(deps.kinds.map((k) => [k.kind, k]));
  }

  /** The kind named `kind`, if a connector defines it. */
  kind(kind: string): ConnectionKind | undefined {
    return this.byKind.get(kind);
  }

  /** Every kind, in the order the connectors were given. */
  kinds(): readonly ConnectionKind[] {
    return this.deps.kinds;
  }

  /** Loads the granted capabilities into memory, then every `refreshMs` (default 30 s). */
  async start(refreshMs = 30_000): Promise<void> {
    await this.refresh();
    this.timer ??= setInterval(() => {
      this.refresh().catch((err: unknown) => this.deps.logger.warn({ err }, "could not refresh the connections' capabilities"));
    }, refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async refresh(): Promise<void> {
    const next = new Map<string, Set<string>>();
    for (const c of await this.deps.store.connections.listConnections()) {
      const set = next.get(`${c.personId}\u0000${c.kind}`) ?? new Set<string>();
      for (const cap of c.capabilities) set.add(cap);
      next.set(`${c.personId}\u0000${c.kind}`, set);
    }
    this.grants = next;
  }

  /** Whether the person has a `kind` connection with `capability` granted (from memory; cheap). */
  granted(personId: PersonId, kind: string, capability: string): boolean {
    return this.grants.get(`${personId}\u0000${kind}`)?.has(capability) ?? false;
  }

  /** The person's connections (or everyone's), optionally of one kind. */
  list(filter: { personId?: PersonId; kind?: string } = {}): Promise<Connection[]> {
    return this.deps.store.connections.listConnections(filter);
  }

  /** The connection, when it is `personId`'s (any person's when omitted). */
  async get(id: ConnectionId, personId?: PersonId): Promise<Connection | null> {
    const c = await this.deps.store.connections.getConnection(id);
    return c && (personId === undefined || c.personId === personId) ? c : null;
  }

  /** The connection's credential from the person's vault, for its connector only (null when none). */
  secretOf(connection: Pick<Connection, "id" | "personId">): string | null {
    return this.deps.vault.reveal(connection.personId, connectionSecretName(connection.id));
  }

  /**
   * Makes or updates a connection (the same person, kind and label is the same connection). With
   * `test`, it is kept only when the test passes. The credential goes to the person's vault.
   */
  async connect(input: ConnectInput): Promise<ConnectResult> {
    const kind = this.byKind.get(input.kind);
    if (!kind) return { ok: false, problems: [`Familiar has no connections of the kind "${input.kind}" (known: ${[...this.byKind.keys()].join(", ") || "none"}).`] };
    let parsed: { settings: Connection["settings"]; label: string };
    try {
      parsed = kind.parseSettings(input.settings);
    } catch (err) {
      return { ok: false, problems: [(err as Error).message] };
    }
    const capabilities = [...new Set(input.capabilities ?? kind.defaultCapabilities)];
    const unknown = capabilities.filter((c) => !kind.capabilities.some((k) => k.id === c));
    if (unknown.length) return { ok: false, problems: [`${kind.title} has no capability ${unknown.join(", ")} (it has ${kind.capabilities.map((k) => k.id).join(", ")}).`] };
    const existing = (await this.deps.store.connections.listConnections({ personId: input.personId, kind: kind.kind })).find((c) => c.label === parsed.label) ?? null;
    const secret = input.secret ?? (existing ? this.secretOf(existing) : null);
    if (kind.needsSecret && !secret) return { ok: false, problems: [`${kind.title} needs its password (an app password for most providers).`] };
    const test = input.test ? await kind.test(parsed.settings, secret) : null;
    if (test && !test.ok) return { ok: false, problems: test.problems };
    const now = this.deps.clock.now();
    const connection = existing
      ? await this.deps.store.connections.updateConnection(existing.id, { settings: parsed.settings, capabilities, source: input.source }, now)
      : await this.deps.store.connections.createConnection({ personId: input.personId, kind: kind.kind, label: parsed.label, settings: parsed.settings, capabilities, source: input.source });
    if (secret !== null && (input.secret !== null || !existing)) await this.deps.vault.set(input.personId, connectionSecretName(connection.id), secret, []);
    if (test?.ok) await this.setStatus(connection.id, { ...connection.status, state: "ok", lastError: null, checkedAt: now });
    await this.deps.store.audit.appendAudit({
      personId: input.personId,
      kind: existing ? "connection.updated" : "connection.connected",
      summary: `${existing ? "Updated" : "Connected"} ${kind.title} ${parsed.label} (${capabilities.join(", ") || "no capabilities"})`,
      data: { connectionId: connection.id, kind: kind.kind, capabilities, source: input.source },
    });
    await this.afterChange(kind, connection.id);
    return { ok: true, connection: (await this.get(connection.id)) ?? connection, created: !existing, test };
  }

  /**
   * Tries settings without keeping anything (the Connections page's *Test* before *Connect*): the
   * settings are validated, and a null `secret` uses the stored one of the person's connection with
   * the same label (testing a change without typing the password again). Never throws; the problems
   * are in words and never quote the secret.
   */
  async check(input: Pick<ConnectInput, "personId" | "kind" | "settings" | "secret">): Promise<ConnectionTest> {
    const kind = this.byKind.get(input.kind);
    if (!kind) return { ok: false, problems: [`Familiar has no connections of the kind "${input.kind}".`] };
    let parsed: { settings: Connection["settings"]; label: string };
    try {
      parsed = kind.parseSettings(input.settings);
    } catch (err) {
      return { ok: false, problems: [(err as Error).message] };
    }
    let secret = input.secret;
    if (secret === null) {
      const existing = (await this.deps.store.connections.listConnections({ personId: input.personId, kind: kind.kind })).find((c) => c.label === parsed.label);
      secret = existing ? this.secretOf(existing) : null;
    }
    if (kind.needsSecret && !secret) return { ok: false, problems: [`${kind.title} needs its password (an app password for most providers).`] };
    return kind.test(parsed.settings, secret);
  }

  /**
   * Changes a kept connection's settings (and its password, unless `secret` is null: then the stored
   * one is kept), tested before kept like `connect`. The settings must still name the same
   * connection (its label: the mailbox's address, the account's user and host); other settings are
   * a new connection and are refused in words. @throws NotFoundError
   */
  async change(personId: PersonId, id: ConnectionId, settings: unknown, secret: string | null): Promise<ConnectResult> {
    const current = await this.get(id, personId);
    const kind = current ? this.byKind.get(current.kind) : undefined;
    if (!current || !kind) throw new NotFoundError("connection", id);
    let label: string;
    try {
      label = kind.parseSettings(settings).label;
    } catch (err) {
      return { ok: false, problems: [(err as Error).message] };
    }
    if (label !== current.label) return { ok: false, problems: [`These settings are for ${label}, not ${current.label}: add it as a new connection instead.`] };
    return this.connect({ personId, kind: kind.kind, settings, secret, capabilities: current.capabilities, source: "person", test: true });
  }

  /** Grants exactly `capabilities` (the others are withdrawn). @throws NotFoundError, Error (unknown capability) */
  async setCapabilities(personId: PersonId, id: ConnectionId, capabilities: readonly string[]): Promise<Connection> {
    const current = await this.get(id, personId);
    if (!current) throw new NotFoundError("connection", id);
    const kind = this.byKind.get(current.kind);
    const unknown = capabilities.filter((c) => !kind?.capabilities.some((k) => k.id === c));
    if (unknown.length) throw new Error(`this connection has no capability ${unknown.join(", ")}`);
    const updated = await this.deps.store.connections.updateConnection(id, { capabilities: [...new Set(capabilities)] }, this.deps.clock.now());
    await this.deps.store.audit.appendAudit({ personId, kind: "connection.capabilities", summary: `${current.label}: ${updated.capabilities.join(", ") || "no capabilities"}`, data: { connectionId: id, capabilities: updated.capabilities } });
    if (kind) await this.afterChange(kind, id);
    return updated;
  }

  /** Tries a stored connection now and records the outcome as its status. @throws NotFoundError */
  async test(personId: PersonId, id: ConnectionId): Promise<ConnectionTest> {
    const c = await this.get(id, personId);
    const kind = c ? this.byKind.get(c.kind) : undefined;
    if (!c || !kind) throw new NotFoundError("connection", id);
    const result = await kind.test(c.settings, this.secretOf(c));
    const now = this.deps.clock.now();
    await this.setStatus(id, { ...c.status, state: result.ok ? "ok" : "error", lastError: result.ok ? null : result.problems.join(" "), checkedAt: now });
    return result;
  }

  /** Disconnects: the record, its synced state and its credential are deleted. False when there was none. */
  async disconnect(personId: PersonId, id: ConnectionId): Promise<boolean> {
    const c = await this.get(id, personId);
    if (!c) return false;
    await this.deps.store.connections.deleteConnection(id);
    await this.deps.vault.delete(personId, connectionSecretName(id));
    await this.deps.store.audit.appendAudit({ personId, kind: "connection.disconnected", summary: `Disconnected ${c.label} (credential deleted)`, data: { connectionId: id, kind: c.kind } });
    const kind = this.byKind.get(c.kind);
    await this.refresh();
    if (kind?.changed) await kind.changed(id, null);
    return true;
  }

  /** What the sync saw (the Connections page shows it). Never throws. */
  async setStatus(id: ConnectionId, status: ConnectionStatus): Promise<void> {
    try {
      await this.deps.store.connections.setConnectionStatus(id, status);
    } catch (err) {
      this.deps.logger.warn({ err, connectionId: id }, "could not record a connection's status");
    }
  }

  private async afterChange(kind: ConnectionKind, id: ConnectionId): Promise<void> {
    await this.refresh();
    if (!kind.changed) return;
    try {
      await kind.changed(id, await this.get(id));
    } catch (err) {
      this.deps.logger.warn({ err, connectionId: id, kind: kind.kind }, "a connection changed but its sync could not be updated");
    }
  }
}
