/**
 * How the model names a message: `<connection id>:<UIDVALIDITY>:<UID>:<folder>` (the folder last, as it
 * may hold colons). A ref stays valid while the folder keeps its UIDVALIDITY; after a rebuild it is
 * refused as not found rather than pointing at another message.
 */
import type { MessageRef } from "./mailbox-client.js";

/** A message ref with the connection it belongs to. */
export interface MailRef extends MessageRef {
  connectionId: string;
}

/** The ref as one string. */
export function formatRef(ref: MailRef): string {
  return `${ref.connectionId}:${ref.uidValidity}:${ref.uid}:${ref.path}`;
}

/** Parses a ref string; null when it is not one. */
export function parseRef(text: string): MailRef | null {
  const m = /^(conn_[0-9a-f]{28,40}):(\d{1,10}):(\d{1,10}):(.{1,500})$/.exec(text.trim());
  if (!m) return null;
  return { connectionId: m[1]!, uidValidity: m[2]!, uid: Number(m[3]), path: m[4]! };
}
