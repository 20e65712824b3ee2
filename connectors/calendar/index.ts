/**
 * The calendar connector: the person's CalDAV calendars and the iCalendar feeds they follow.
 *
 * It owns the connection kinds `caldav` and `ics` (plugged into core/connections), their sync
 * (tsdav and plain HTTP through the egress guard; sync tokens, ctags and ETags; a refused token means
 * a full listing with deletions applied), the parsing and the expansion of events with ical.js in
 * the person's zone, the calendar store (SQLite and MongoDB), conflicts, the changes that wake
 * watches, and the tools `calendar_list`, `calendar_conflicts`, `calendar_create`,
 * `calendar_update`, `calendar_delete` and `watch_calendar`. Everything it reads is untrusted
 * content; every write is described to Sentinel exactly and asks unless a grant covers it. It never
 * holds a credential beyond the call it is read for.
 */
export { calendarKinds, CALENDAR_CHANGE_KIND, type CalendarKindDeps } from "./kinds.js";
export { CalendarService, CALENDAR_SYNC_JOB, type CalendarServiceDeps } from "./service.js";
export { calendarReadTools, type CalendarReadDeps } from "./read-tools.js";
export { calendarWriteTools } from "./write-tools.js";
export { calendarWatchTool, type CalendarWatchDeps } from "./watch-tool.js";
export type { CalendarWriteDeps } from "./write-plans.js";
export type { CalendarConnections, CalendarConnection } from "./connections.js";
export type { CalendarStore } from "./store.js";
export { SqliteCalendarStore } from "./sqlite-store.js";
export { MongoCalendarStore, calendarCollections } from "./mongo-store.js";
export type { CalendarHttp } from "./http.js";
