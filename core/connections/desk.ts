/**
 * The connect desk: a one-time link to a kind's connection form, as `/connect email` sends it (like
 * `/secret`): the token in the URL is the capability (only its SHA-256 is kept, in memory; valid
 * {@link CONNECT_LINK_TTL_MS}, at most {@link MAX_ATTEMPTS} submissions). A submission is tested
 * before anything is kept; a failed test leaves the link usable to correct the values, a passed one
 * spends it and tells the person in chat — never the password.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import type { Outbound } from "../outbox/index.js";
import type { Connection } from "./records.js";
import type { Connections } from "./connections.js";
import type { ConnectionKind, ConnectionTest } from "./kinds.js";

/** How long a connect link is valid, ms: 30 minutes (time to find an app password). */
export const CONNECT_LINK_TTL_MS = 30 * 60_000;
/** Submissions one link takes (each runs a login test against the person's server). */
export const MAX_ATTEMPTS = 10;
const MAX_LINKS = 1000;

export type ConnectSubmit =
  | { ok: true; connection: Connection; test: ConnectionTest | null }
  | { ok: false; status: 400 | 410; problems: string[] };

export interface ConnectDeskDeps {
  connections: Connections;
  clock: Clock;
  publicUrl: () => string;
  /** The one outbound door (core/outbox): the "connected" confirmation is queued there. */
  outbound: Pick<Outbound, "queue">;
  ttlMs?: number;
}

interface Link {
  personId: PersonId;
  kind: string;
  expiresAt: number;
  attempts: number;
}

export class ConnectDesk {
  private readonly links = new Map<string, Link>();

  constructor(private readonly deps: ConnectDeskDeps) {}

  /** A fresh link to `kind`'s form for the person. @throws Error when the kind has no form */
  offer(personId: PersonId, kind: string): { url: string; expiresAt: Date } {
    if (!this.deps.connections.kind(kind)?.form) throw new Error(`no connection form for ${kind}`);
    const now = this.deps.clock.now().getTime();
    for (const [hash, link] of this.links) if (link.expiresAt <= now) this.links.delete(hash);
    while (this.links.size >= MAX_LINKS) this.links.delete(this.links.keys().next().value!);
    const token = randomBytes(32).toString("base64url");
    const expiresAt = now + (this.deps.ttlMs ?? CONNECT_LINK_TTL_MS);
    this.links.set(hashOf(token), { personId, kind, expiresAt, attempts: 0 });
    return { url: `${this.deps.publicUrl().replace(/\/$/, "")}/connect/${token}`, expiresAt: new Date(expiresAt) };
  }

  /** The link's person and kind (null when unknown, spent or expired). */
  peek(token: string): { personId: PersonId; kind: ConnectionKind } | null {
    const link = this.links.get(hashOf(token));
    const kind = link ? this.deps.connections.kind(link.kind) : undefined;
    if (!link || !kind || link.expiresAt <= this.deps.clock.now().getTime()) return null;
    return { personId: link.personId, kind };
  }

  /** The link's person and kind for one more try (counted), or why not (spent, expired, tried too often). */
  private attempt(token: string): { link: Link; kind: ConnectionKind & { form: NonNullable<ConnectionKind["form"]> }; secret: (values: Record<string, string>) => string | null } | { ok: false; status: 410; problems: string[] } {
    const hash = hashOf(token);
    const link = this.links.get(hash);
    const kind = link ? this.deps.connections.kind(link.kind) : undefined;
    if (!link || !kind?.form || link.expiresAt <= this.deps.clock.now().getTime()) return { ok: false, status: 410, problems: [`This link has expired or was already used. Ask Familiar for a new one (/connect ${word(kind)}).`] };
    if (++link.attempts > MAX_ATTEMPTS) {
      this.links.delete(hash);
      return { ok: false, status: 410, problems: [`This link was tried ${MAX_ATTEMPTS} times. Ask Familiar for a new one (/connect ${word(kind)}).`] };
    }
    const secretField = kind.form.fields.find((f) => f.type === "password");
    const secret = (values: Record<string, string>) => (secretField ? values[secretField.name] || null : null);
    return { link, kind: kind as ConnectionKind & { form: NonNullable<ConnectionKind["form"]> }, secret };
  }

  /** Tries what the form posted without keeping anything (its *Test* button); counts as a try of the link. */
  async check(token: string, values: Record<string, string>): Promise<{ ok: true; test: ConnectionTest } | { ok: false; status: 410; problems: string[] }> {
    const at = this.attempt(token);
    if ("ok" in at) return at;
    const test = await this.deps.connections.check({ personId: at.link.personId, kind: at.kind.kind, settings: at.kind.form.toSettings(values), secret: at.secret(values) });
    return { ok: true, test };
  }

  /** Tests and keeps what the form posted (values by field name; the chosen capabilities). */
  async submit(token: string, values: Record<string, string>, capabilities: string[]): Promise<ConnectSubmit> {
    const at = this.attempt(token);
    if ("ok" in at) return at;
    const { link, kind } = at;
    const hash = hashOf(token);
    const result = await this.deps.connections.connect({
      personId: link.personId,
      kind: kind.kind,
      settings: kind.form.toSettings(values),
      secret: at.secret(values),
      capabilities,
      source: "person",
      test: true,
    });
    if (!result.ok) return { ok: false, status: 400, problems: result.problems };
    this.links.delete(hash);
    const c = result.connection;
    const now = this.deps.clock.now();
    const allows = c.capabilities.map((id) => kind.capabilities.find((k) => k.id === id)?.label ?? id).join(", ");
    await this.deps.outbound.queue(
      { personId: link.personId, deliveryKey: `connected:${c.id}:${now.getTime()}`, text: `Connected ${kind.title} ${c.label} (${allows || "nothing granted yet"}). The password is in your vault; I never see it. See its state, change what I may do, test or disconnect it in the Connections section of the web app: ${this.deps.publicUrl().replace(/\/$/, "")}/dashboard/connections` },
      { now },
    );
    return { ok: true, connection: c, test: result.test };
  }

  /** The chat text offering a one-time link to `kind`'s form. */
  offerText(personId: PersonId, kind: string): string {
    const { url } = this.offer(personId, kind);
    const k = this.deps.connections.kind(kind)!;
    const minutes = Math.round((this.deps.ttlMs ?? CONNECT_LINK_TTL_MS) / 60_000);
    return `To connect ${k.title}, open this one-time link (valid ${minutes} minutes): ${url}\nYou enter the server settings and an app password there; Familiar tests them before keeping anything, and I never see the password.\nThe same form is in the Connections section of the web app (${this.deps.publicUrl().replace(/\/$/, "")}/dashboard/connections), where you also see each connection's state, change what I may do, test or disconnect it.`;
  }
}

/** What the person types after `/connect` for the kind (its first alias, else its name; `email` when unknown). */
function word(kind: ConnectionKind | undefined): string {
  return kind ? (kind.aliases?.[0] ?? kind.kind) : "email";
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
