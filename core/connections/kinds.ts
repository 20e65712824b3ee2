/**
 * The plug-in port of connections: what a connection kind (email, caldav, ics — each defined by its
 * connector) tells the framework. The framework keeps the records, the credentials (in the person's
 * vault) and the granted capabilities; the kind knows its settings, how to test them, what each
 * capability allows, and — for kinds whose changes can wake watches — how its changes match a filter.
 */
import type { ConnectionId } from "../ids.js";
import type { Connection, ConnectionChange } from "./records.js";
import type { Json } from "../json.js";

/** One capability of a kind, granted separately (`read`, `send`, `organise`). */
export interface CapabilityInfo {
  id: string;
  /** Short label: "Read mail". */
  label: string;
  /** What it allows, in one plain sentence (the Connections page shows it). */
  allows: string;
}

/** Outcome of trying a connection: what worked, or what failed in words. */
export type ConnectionTest = { ok: true; summary: string } | { ok: false; problems: string[] };

/** One field of a kind's connection form (the one-time `/connect` page renders it). */
export interface FormField {
  name: string;
  label: string;
  type: "text" | "email" | "number" | "password" | "select" | "textarea";
  required?: boolean;
  /** Prefilled value. */
  value?: string;
  options?: { value: string; label: string }[];
  hint?: string;
}

/**
 * How a kind is connected from a form: its fields (exactly one `password` field holds the secret,
 * which goes to the vault), and how the posted values become settings for `parseSettings`.
 */
export interface ConnectionForm {
  fields: readonly FormField[];
  /** Posted values (by field name) → the settings input. */
  toSettings(values: Record<string, string>): unknown;
  /**
   * Kept settings → the form's values, to change a connection (never a password: password fields
   * are write-only and left empty, which keeps the stored one). Absent: it can only be connected again.
   */
  toValues?(settings: Json): Record<string, string>;
  /** Plain hints shown above the form (app passwords, provider settings). */
  intro: string;
}

/** A connection kind. */
export interface ConnectionKind {
  kind: string;
  /** Other names a person may type after `/connect` for this kind (`calendar` for `caldav`). */
  aliases?: readonly string[];
  /** "Email (IMAP and SMTP)". */
  title: string;
  capabilities: readonly CapabilityInfo[];
  /** Granted when nothing else is said (the least: usually read). */
  defaultCapabilities: readonly string[];
  /** Whether it needs a password or token (a public feed does not). */
  needsSecret: boolean;
  /**
   * Validates settings from a form, FAMILIAR_CONFIG or the store. Returns the settings to keep (no
   * secret in them) and the connection's label. @throws Error whose message lists every problem in words
   */
  parseSettings(input: unknown): { settings: Json; label: string };
  /** The connection form (absent: connected from FAMILIAR_CONFIG only). */
  form?: ConnectionForm;
  /** Tries the connection with `secret`; never throws, never quotes the secret. */
  test(settings: Json, secret: string | null): Promise<ConnectionTest>;
  /** Called after a connection of this kind was made, changed (`connection`) or removed (null): start or stop its sync. */
  changed?(id: ConnectionId, connection: Connection | null): Promise<void>;
  /** For kinds whose changes wake watches: the change kind, the match and the observation (see core/runtime ChangeKinds). */
  changes?: {
    changeKind: string;
    matches(filter: Json, change: ConnectionChange): boolean;
    observe(change: ConnectionChange): { source: string; text: string };
  };
}
