/**
 * What the email tools share: their dependencies, finding the mailbox a call means (the person's own,
 * with the capability granted), results in the tool contract's shape, and mail errors in words.
 */
import type { Connections } from "../../../core/connections/index.js";
import type { PersonId } from "../../../core/ids.js";
import type { Store } from "../../../core/storage/index.js";
import type { ToolErrorCode, ToolResult } from "../../../core/tools/index.js";
import { EmailError } from "../errors.js";
import { parseRef, type MailRef } from "../refs.js";
import type { Account, EmailService } from "../service.js";

/** The person's workspace as the email tools use it (attachments in and out), from app/. */
export interface MailWorkspace {
  /** Reads a workspace file, at most `maxBytes`. @throws Error with words (not found, outside the workspace, too large) */
  readFile(personId: PersonId, path: string, maxBytes: number): Promise<Buffer>;
  /** Writes a workspace file; returns the bytes written. @throws Error with words */
  writeFile(personId: PersonId, path: string, content: Uint8Array): Promise<number>;
}

export interface EmailToolDeps {
  service: EmailService;
  connections: Connections;
  store: Pick<Store, "changes">;
  workspace: MailWorkspace;
  /** Automatic sends allowed per thread and 24 hours (EMAIL_AUTOMATIC_SENDS_PER_THREAD). */
  automaticPerThread: number;
  /** Wakes the watches after a watch was made (core/runtime ChangeDispatcher). */
  pokeWatches: (personId: PersonId) => void;
}

/** Capabilities of the email kind. */
export type EmailCapability = "read" | "send" | "organise";

export const ok = (content: string, extra: Partial<Extract<ToolResult, { ok: true }>> = {}): ToolResult => ({ ok: true, content, ...extra });
export const fail = (code: ToolErrorCode, error: string): ToolResult => ({ ok: false, code, error });

/** A thrown mail error as a tool result (words only; never a credential). */
export function mailFailure(err: unknown): ToolResult {
  if (err instanceof EmailError) return fail(err.code === "not_found" ? "not_found" : err.code === "too_large" ? "too_large" : "mail_error", err.message);
  return fail("mail_error", `The mail server could not be used: ${(err as Error)?.message?.slice(0, 200) ?? "unknown error"}`);
}

const noneText = (capability: EmailCapability) =>
  `No mailbox of this person allows "${capability}". They can connect one with /connect email, or grant "${capability}" on the Connections page.`;

/** The account a call means: `mailbox` (an address) or the person's first with the capability. */
export async function accountFor(deps: EmailToolDeps, personId: PersonId, capability: EmailCapability, mailbox?: string): Promise<Account | ToolResult> {
  const all = await deps.service.accounts(personId, capability);
  const chosen = mailbox ? all.find((a) => a.connection.label === mailbox.trim().toLowerCase()) : all[0];
  if (!chosen) return fail("no_mailbox", mailbox ? `${mailbox} is not a connected mailbox of this person with "${capability}" granted.` : noneText(capability));
  return chosen;
}

/** The account and ref of a message id, checked to be the person's own and the capability granted. */
export async function messageFor(deps: EmailToolDeps, personId: PersonId, capability: EmailCapability, id: string): Promise<{ account: Account; ref: MailRef } | ToolResult> {
  const ref = parseRef(id);
  if (!ref) return fail("not_found", `"${id.slice(0, 80)}" is not a message id (ids come from email_search or a new-mail notice).`);
  const account = await deps.service.account(ref.connectionId);
  if (!account || account.connection.personId !== personId) return fail("not_found", "That message is not in one of this person's mailboxes.");
  if (!account.connection.capabilities.includes(capability)) return fail("no_mailbox", noneText(capability));
  return { account, ref };
}

export const isResult = (v: unknown): v is ToolResult => typeof v === "object" && v !== null && "ok" in v && typeof v.ok === "boolean";

/** Sizes in words: 12 KB, 3.4 MB. */
export function bytesInWords(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${Math.round(n / 1024)} KB` : `${(n / 1048576).toFixed(1)} MB`;
}
