/**
 * The calendar's connection kinds, plugged into the shared connections framework (core/connections):
 *
 * - `caldav`: a CalDAV account — `url` (the server's CalDAV URL; discovery goes through
 *   `.well-known`), `user`, and an app password (in the person's vault). Capabilities `read` and
 *   `write`, granted separately.
 * - `ics`: an iCalendar feed by URL (`https://`, `http://` or `webcal://`), optional `name`.
 *   Capability `read` only: a feed cannot be written.
 *
 * Each kind says how to test it (the discovery, or one fetch), what its changes are
 * (`calendar.changed`) and how a task's filter matches them (`watch-filter.ts`).
 */
import { z } from "zod";
import type { CapabilityInfo, ConnectionForm, ConnectionKind } from "../../core/connections/index.js";
import type { ConnectionId } from "../../core/ids.js";
import type { Connection, ConnectionChange } from "../../core/connections/index.js";
import type { Json } from "../../core/json.js";
import { CaldavClient } from "./caldav.js";
import { CalendarError } from "./errors.js";
import { feedUrl, fetchFeed } from "./feed.js";
import type { CalendarHttp } from "./http.js";
import { quote } from "./present.js";
import { calendarFilterSchema, matchesChange } from "./watch-filter.js";

/** The change kind of calendar connections (what their watches wait for). */
export const CALENDAR_CHANGE_KIND = "calendar.changed";

const httpUrl = z
  .string()
  .trim()
  .min(1, "the server URL is needed")
  .max(2_000)
  .refine((u) => /^https?:\/\/[^\s]+$/i.test(u), "the server URL must start with https:// (or http:// for a server on your own network)");

/** A CalDAV connection's settings (the password is not among them). */
export const caldavSettingsSchema = z
  .object({
    url: httpUrl,
    user: z.string().trim().min(1, "the user name is needed").max(320),
  })
  .strict();

/** A feed connection's settings. */
export const icsSettingsSchema = z
  .object({
    url: z
      .string()
      .trim()
      .min(1, "the feed URL is needed")
      .max(2_000)
      .refine((u) => /^(https?|webcals?):\/\/[^\s]+$/i.test(u), "the feed URL must start with https://, http:// or webcal://"),
    name: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

const READ: CapabilityInfo = {
  id: "read",
  label: "Read calendars",
  allows: "Familiar syncs the calendars, lists their events when you ask, notices conflicts between your own calendars and wakes tasks waiting for a calendar change.",
};
const WRITE: CapabilityInfo = {
  id: "write",
  label: "Change calendars",
  allows: "Familiar may create, change and delete events; every change is shown to you on a card first, unless you approved such changes for longer.",
};

/** The CalDAV account's form (the Connections section and the one-time `/connect calendar` page). */
const caldavForm: ConnectionForm = {
  intro:
    "Enter your calendar server's CalDAV address, your user name and an app password (not your main password). iCloud: https://caldav.icloud.com with an app-specific password from appleid.apple.com. Fastmail: https://caldav.fastmail.com with an app password. Nextcloud: https://your-server/remote.php/dav. Google Calendar is not supported yet (it needs OAuth).",
  fields: [
    { name: "url", label: "CalDAV server URL", type: "text", required: true, hint: "e.g. https://caldav.fastmail.com" },
    { name: "user", label: "User name", type: "text", required: true, hint: "usually your e-mail address" },
    { name: "password", label: "App password", type: "password", required: true },
  ],
  toSettings: (values) => ({ url: values.url ?? "", user: values.user ?? "" }),
  toValues: (settings): Record<string, string> => {
    const parsed = caldavSettingsSchema.safeParse(settings);
    return parsed.success ? { url: parsed.data.url, user: parsed.data.user } : {};
  },
};

/** A feed's form (the Connections section and the one-time `/connect feed` page). */
const icsForm: ConnectionForm = {
  intro: "Paste the address of a calendar feed (a school's term dates, a club's fixtures): it usually ends in .ics, and may start with webcal://. Familiar only reads it.",
  fields: [
    { name: "url", label: "Feed URL", type: "text", required: true, hint: "https://… or webcal://…" },
    { name: "name", label: "Name (optional)", type: "text" },
  ],
  toSettings: (values) => ({ url: values.url ?? "", ...(values.name ? { name: values.name } : {}) }),
  toValues: (settings): Record<string, string> => {
    const parsed = icsSettingsSchema.safeParse(settings);
    return parsed.success ? { url: parsed.data.url, name: parsed.data.name ?? "" } : {};
  },
};

/** What the kinds need: the network door for a connection, and what to do when one changes. */
export interface CalendarKindDeps {
  /**
   * The egress path for requests that carry `credential` (a connection's own password) on purpose
   * to the connection's server; null for requests that must carry no vault value at all (feeds).
   */
  httpFor(credential: string | null): CalendarHttp;
  /** A connection of a calendar kind was made, changed or removed (null): start or stop its sync. */
  changed(id: ConnectionId, connection: Connection | null): Promise<void>;
}

/** The `caldav` and `ics` kinds. */
export function calendarKinds(deps: CalendarKindDeps): ConnectionKind[] {
  const changes = {
    changeKind: CALENDAR_CHANGE_KIND,
    matches: (filter: Json, change: ConnectionChange) => {
      const parsed = calendarFilterSchema.safeParse(filter);
      const facts = changeFactsSchema.safeParse(change.data);
      return parsed.success && facts.success && matchesChange(parsed.data, facts.data);
    },
    observe: (change: ConnectionChange) => {
      const facts = changeFactsSchema.safeParse(change.data);
      if (!facts.success) return { source: "calendar", text: "A calendar changed." };
      return { source: `calendar ${facts.data.calendarName}`, text: observationText(facts.data) };
    },
  };
  const caldav: ConnectionKind = {
    kind: "caldav",
    aliases: ["calendar", "caldav"],
    title: "Calendar (CalDAV)",
    capabilities: [READ, WRITE],
    defaultCapabilities: ["read"],
    needsSecret: true,
    parseSettings(input) {
      const settings = parseOrExplain(caldavSettingsSchema, input, "CalDAV");
      return { settings, label: `${settings.user} at ${new URL(settings.url).host}` };
    },
    form: caldavForm,
    async test(settings, secret) {
      const parsed = caldavSettingsSchema.safeParse(settings);
      if (!parsed.success) return { ok: false, problems: [parsed.error.issues.map((i) => i.message).join("; ")] };
      if (!secret) return { ok: false, problems: ["the app password is missing"] };
      try {
        const calendars = await new CaldavClient({ serverUrl: parsed.data.url, username: parsed.data.user, password: secret }, deps.httpFor(secret)).calendars();
        if (calendars.length === 0) return { ok: false, problems: ["the account works, but it has no calendars with events"] };
        return { ok: true, summary: `Found ${calendars.length} ${calendars.length === 1 ? "calendar" : "calendars"}: ${calendars.map((c) => quote(c.name, 60)).join(", ")}.` };
      } catch (error) {
        return { ok: false, problems: [error instanceof CalendarError ? error.message : "the server could not be reached"] };
      }
    },
    changed: (id, connection) => deps.changed(id, connection),
    changes,
  };
  const ics: ConnectionKind = {
    kind: "ics",
    aliases: ["feed", "ics", "webcal"],
    title: "Calendar feed (iCalendar URL)",
    capabilities: [READ],
    defaultCapabilities: ["read"],
    needsSecret: false,
    parseSettings(input) {
      const settings = parseOrExplain(icsSettingsSchema, input, "calendar feed");
      const url = feedUrl(settings.url);
      return { settings: { ...settings, url }, label: settings.name ?? `${new URL(url).host}${new URL(url).pathname}` };
    },
    form: icsForm,
    async test(settings) {
      const parsed = icsSettingsSchema.safeParse(settings);
      if (!parsed.success) return { ok: false, problems: [parsed.error.issues.map((i) => i.message).join("; ")] };
      try {
        const fetched = await fetchFeed(deps.httpFor(null), parsed.data.url, null);
        if (fetched.kind !== "changed") return { ok: true, summary: "The feed answered." };
        return { ok: true, summary: `The feed${fetched.parsed.name ? ` ${quote(fetched.parsed.name, 60)}` : ""} has ${fetched.parsed.series.length} events.` };
      } catch (error) {
        return { ok: false, problems: [error instanceof CalendarError ? error.message : "the feed could not be fetched"] };
      }
    },
    changed: (id, connection) => deps.changed(id, connection),
    changes,
  };
  return [caldav, ics];
}

/** The facts a calendar change keeps (what filters match and what a woken task is told). */
export const changeFactsSchema = z.object({
  kind: z.enum(["added", "moved", "cancelled", "changed", "removed"]),
  calendarName: z.string(),
  sourceKind: z.enum(["caldav", "ics"]),
  uid: z.string(),
  title: z.string(),
  /** The event's time now (or before, when removed) in words, in the person's zone. */
  when: z.string().nullable(),
  /** Its time before, when it moved. */
  before: z.string().nullable(),
});
export type ChangeFacts = z.infer<typeof changeFactsSchema>;

function observationText(facts: ChangeFacts): string {
  const where = `the calendar ${quote(facts.calendarName)}${facts.sourceKind === "ics" ? " (a followed feed)" : ""}`;
  const what = `${quote(facts.title)} was ${facts.kind === "moved" ? "moved" : facts.kind} in ${where}`;
  const times = facts.kind === "moved" && facts.before ? `: from ${facts.before} to ${facts.when ?? "?"}` : facts.when ? `: ${facts.when}` : "";
  return `Calendar change: ${what}${times}.`;
}

function parseOrExplain<S extends z.ZodType>(schema: S, input: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new Error(`The ${what} settings are not right: ${parsed.error.issues.map((i) => `${i.path.join(".") || "settings"}: ${i.message}`).join("; ")}.`);
}
