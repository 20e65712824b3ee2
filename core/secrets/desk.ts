/**
 * The secret desk: how a person puts a credential into their own part of the vault without typing
 * it into chat. The chat (the `/secret NAME` command, the `request_secret` tool, or the offer made
 * when secret-looking text was withheld) sends a **one-time form link** to this install's web server;
 * the form posts name, value and bound origins; the chat is then told "Stored NAME" — never the value.
 *
 * Links: 32 random bytes (base64url) in the URL; only their SHA-256 is kept, in memory (an unused
 * link dies with the process — ask for a new one); valid {@link SECRET_LINK_TTL_MS}; spent by the
 * first valid submission.
 */
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import type { Clock } from "../clock.js";
import type { PersonId } from "../ids.js";
import type { Outbound } from "../outbox/index.js";
import type { Store } from "../storage/index.js";
import { SecretError } from "./errors.js";
import { originOf, type SecretListing, type SecretVault } from "./vault.js";

/** How long a one-time secret link is valid, ms: 15 minutes. */
export const SECRET_LINK_TTL_MS = 15 * 60_000;
/** Most open links at once (older ones are dropped first). */
const MAX_LINKS = 1000;

/** What the form posts. */
export const secretFormSchema = z.object({
  name: z.string().trim().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a name of 1–64 characters: letters, digits, _ . -"),
  value: z.string().min(1, "the secret itself").max(16_384),
  origins: z
    .array(z.string().trim().min(1).max(2_048))
    .min(1, "at least one site (https://…) it may be sent to")
    .max(20)
    .refine((list) => list.every((o) => originOf(o) !== null), "each site must be an http(s) address such as https://api.example.com"),
});

/** Outcome of a form submission. */
export type SubmitResult = { ok: true; name: string; origins: string[] } | { ok: false; status: 400 | 410; error: string };

/** Dependencies of the {@link SecretDesk}. */
export interface SecretDeskDeps {
  vault: SecretVault;
  store: Pick<Store, "audit">;
  clock: Clock;
  /** The base URL people open (PUBLIC_URL, else the listening address). */
  publicUrl: () => string;
  /** Where the "Stored NAME" message is queued (the one outbound door). */
  outbound: Pick<Outbound, "queue">;
  ttlMs?: number;
}

/** One-time secret links and the person's own secrets. */
export class SecretDesk {
  private readonly links = new Map<string, { personId: PersonId; name: string | null; expiresAt: number }>();

  constructor(private readonly deps: SecretDeskDeps) {}

  /** A fresh single-use link to the secret form for `personId` (name prefilled when given). */
  offer(personId: PersonId, name: string | null = null): { url: string; expiresAt: Date } {
    const now = this.deps.clock.now().getTime();
    for (const [hash, link] of this.links) if (link.expiresAt <= now) this.links.delete(hash);
    while (this.links.size >= MAX_LINKS) this.links.delete(this.links.keys().next().value!);
    const token = randomBytes(32).toString("base64url");
    const expiresAt = now + (this.deps.ttlMs ?? SECRET_LINK_TTL_MS);
    const clean = name !== null && /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : null;
    this.links.set(hashOf(token), { personId, name: clean, expiresAt });
    return { url: `${this.deps.publicUrl().replace(/\/$/, "")}/secret/${token}`, expiresAt: new Date(expiresAt) };
  }

  /** The link's person and prefilled name, or null when unknown, spent or expired (not spent by this). */
  peek(token: string): { personId: PersonId; name: string | null } | null {
    const link = this.links.get(hashOf(token));
    if (!link || link.expiresAt <= this.deps.clock.now().getTime()) return null;
    return { personId: link.personId, name: link.name };
  }

  /**
   * Stores what the form posted in the link's person's part of the vault, spends the link, audits
   * (name and origins, never the value) and tells the person in chat "Stored NAME".
   */
  async submit(token: string, input: unknown): Promise<SubmitResult> {
    const hash = hashOf(token);
    const link = this.links.get(hash);
    if (!link || link.expiresAt <= this.deps.clock.now().getTime()) return { ok: false, status: 410, error: "This link has expired or was already used. Ask Familiar for a new one (/secret NAME)." };
    const parsed = secretFormSchema.safeParse(input);
    if (!parsed.success) return { ok: false, status: 400, error: parsed.error.issues.map((i) => i.message).join("; ") };
    const origins = parsed.data.origins.map((o) => originOf(o)!);
    // Spent before anything is awaited: a second submission of the same link finds nothing.
    this.links.delete(hash);
    try {
      await this.deps.vault.set(link.personId, parsed.data.name, parsed.data.value, origins);
    } catch (error) {
      if (error instanceof SecretError) return { ok: false, status: 400, error: error.message };
      throw error;
    }
    const now = this.deps.clock.now();
    const { store } = this.deps;
    const text = `Stored your secret ${parsed.data.name} (it may only be sent to ${origins.join(", ")}). I use it as {{secret:${parsed.data.name}}} and never see the value.`;
    await store.audit.appendAudit({ personId: link.personId, kind: "secret.stored", summary: `Stored secret ${parsed.data.name} for ${origins.join(", ")}`, data: { name: parsed.data.name, origins }, at: now });
    await this.deps.outbound.queue({ personId: link.personId, deliveryKey: `secret-stored:${hash.slice(0, 24)}`, text }, { now });
    return { ok: true, name: parsed.data.name, origins };
  }

  /** The person's own secrets (names and origins). */
  list(personId: PersonId): SecretListing[] {
    return this.deps.vault.list(personId);
  }

  /** Removes one of the person's own secrets (audited); false when there was none. */
  async remove(personId: PersonId, name: string): Promise<boolean> {
    const removed = await this.deps.vault.delete(personId, name);
    if (removed) await this.deps.store.audit.appendAudit({ personId, kind: "secret.removed", summary: `Removed secret ${name}`, data: { name }, at: this.deps.clock.now() });
    return removed;
  }

  /** The chat text that offers a one-time link (used by `/secret`, `request_secret` and the withheld-text offer). */
  offerText(personId: PersonId, name: string | null, why: string): string {
    const { url } = this.offer(personId, name);
    const minutes = Math.round((this.deps.ttlMs ?? SECRET_LINK_TTL_MS) / 60_000);
    return `${why}To store ${name ? `the secret ${name}` : "a secret"} safely in your vault, open this one-time link (valid ${minutes} minutes, once): ${url}\nYou enter the value and the sites it may be sent to there; I only ever get its name.`;
  }
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
