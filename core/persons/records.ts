/**
 * Persons and their accounts: what Familiar keeps about a person (settings, persona, where to reach
 * them), each account on a messenger (an identity), roles and allowed group chats.
 *
 * Records are what the store keeps: both adapters (SQLite, MongoDB) read and write exactly these
 * shapes, and the contract suite checks that they round-trip unchanged. This file imports only the
 * foundation and other rooms' records, so the storage ports and any core room may import it
 * directly; everything outside core/ reads it through the room's door. Every `Date` is an absolute
 * instant, durations are milliseconds, `HH:MM` strings are wall-clock times in the person's own time
 * zone.
 */
import type { PersonId } from "../ids.js";
import type { ChannelName } from "../channels/records.js";

/** How readily Familiar messages first. `off` never starts a conversation (asked-for wake-ups still arrive). */
export type Proactivity = "off" | "low" | "normal" | "high";

/** Quiet hours as wall-clock `HH:MM` in the person's time zone; `from` may be after `to` (overnight). */
export interface QuietHours {
  from: string;
  to: string;
}

/**
 * A person Familiar serves: one continuous conversation, their settings, and any number of accounts
 * on messengers ({@link Identity}) that all lead to them.
 */
export interface Person {
  id: PersonId;
  displayName: string;
  /** IANA time zone name, e.g. `Europe/Berlin` (`UTC` until the person says otherwise). */
  timeZone: string;
  /**
   * Whether the person chose `timeZone` (the web app's first screen, Settings, `/timezone`, or their
   * answer when Familiar asked); false while it is only the default. Set by the store whenever a
   * person is created with a zone or their zone is changed.
   */
  timeZoneConfirmed: boolean;
  /**
   * When Familiar asked a person first met on a messenger for their zone (it asks once), and the
   * message whose turn waits for the answer (its conversation seq; null once released).
   */
  timeZoneAsk: { at: Date; pendingSeq: number | null } | null;
  /** BCP 47 locale, e.g. `en-US`. */
  locale: string;
  proactivity: Proactivity;
  quietHours: QuietHours | null;
  /**
   * `HH:MM` local time at which held messages go out as a digest (`/digest`); null when not set, and
   * then the digest goes out when quiet hours end (see `core/notify/digest-timing.ts`).
   */
  digestTime: string | null;
  /** All background work paused by the person (`/pause`). */
  paused: boolean;
  /** The name Familiar goes by with this person (null: "Familiar"); set on the dashboard. */
  personaName: string | null;
  /** How Familiar should write to this person, in their words (null: the default style). */
  personaStyle: string | null;
  reach: { mode: "last" } | { mode: "messenger"; channel: ChannelName } | { mode: "all" };
  createdAt: Date;
  updatedAt: Date;
}

export type NewPerson = Pick<Person, "displayName"> &
  Partial<Pick<Person, "timeZone" | "locale" | "proactivity" | "quietHours" | "digestTime">>;

export type PersonSettingsPatch = Partial<
  Pick<Person, "displayName" | "timeZone" | "timeZoneAsk" | "locale" | "proactivity" | "quietHours" | "digestTime" | "paused" | "personaName" | "personaStyle" | "reach">
>;

/** One account of a person on one channel. (channel, accountId) is unique across all persons. */
export interface Identity {
  personId: PersonId;
  channel: ChannelName;
  /** The platform's own user id (Telegram user id, Slack user id, phone-based WhatsApp id, …). */
  accountId: string;
  /** Where to reach this account (chat id, DM channel id); defaults to the account id. */
  address: string;
  /** Set after a permanent delivery failure (blocked, chat gone); outbound skips it. */
  unreachable: { reason: string; since: Date } | null;
  createdAt: Date;
}

/** Who acted, through which channel. */
export interface Actor {
  channel: ChannelName;
  accountId: string;
}

/** Who may act at the door besides the owner (OWNER): admins may approve pairings and manage groups. */
export type PersonRole = "admin";

/** A group chat on a messenger (ALLOW_GROUPS entry). */
export interface GroupRef {
  channel: ChannelName;
  /** The platform's chat / channel id of the group. */
  groupId: string;
}

/**
 * Where Familiar reaches a person with a message it starts itself (a message meant for "wherever
 * they are": reminders, check-ins, digests, files):
 * - `last`: the chat they last used, where the web chat counts only while one of its pages is open;
 *   otherwise their most recently used messenger (the default);
 * - `messenger`: the chosen messenger (`channel`) while it is linked and reachable, else as `last`;
 * - `all`: every chat of theirs that is linked and reachable, the web chat included.
 * Replies to a message always go to the chat it came from.
 */
export type ReachPreference = Person["reach"];
