/**
 * What the calendar needs from the person's connections (the shared framework: connections,
 * capabilities granted separately, credentials in the person's vault). Calendar connections are
 * `kind: "caldav"` (url, user, app password) and `kind: "ics"` (url), each with the capabilities
 * `read` (sync, `calendar_list`, `calendar_conflicts`, change events) and `write` (`calendar_create`,
 * `calendar_update`, `calendar_delete`, each still asking through Sentinel unless a grant covers it).
 */
import type { PersonId } from "../../core/ids.js";
import type { CaldavCredentials } from "./caldav.js";

/** One calendar connection of a person (no secret in it). */
export interface CalendarConnection {
  id: string;
  personId: PersonId;
  kind: "caldav" | "ics";
  /** The person's name for it ("Work calendar", "School terms"). */
  label: string;
  /** The CalDAV server URL, or the feed URL. */
  url: string;
  /** CalDAV user name (null for a feed). */
  username: string | null;
  /** What the person granted: read and write separately (a feed is never writable). */
  capabilities: { read: boolean; write: boolean };
}

/** The port the calendar reads its connections through. */
export interface CalendarConnections {
  /** The person's calendar connections. */
  list(personId: PersonId): Promise<CalendarConnection[]>;
  /** Every calendar connection of every person (for scheduling the sync jobs). */
  listAll(): Promise<CalendarConnection[]>;
  /**
   * The CalDAV credentials of a connection, read from the person's vault at the moment of use.
   * @throws Error when the connection is gone or has no credentials
   */
  credentials(personId: PersonId, connectionId: string): Promise<CaldavCredentials>;
  /**
   * Synchronous, in-memory: whether the person has a calendar connection with this capability
   * now (what decides which tools the model is offered).
   */
  granted(personId: PersonId, capability: "read" | "write"): boolean;
}
