/**
 * Time zones: IANA zone names checked and resolved, cron occurrences and local wall-clock times in
 * a person's zone (luxon, cron-parser). Pure functions; the current time comes from the caller.
 */
export { formatLocal, isValidTimeZone, nextCronTime, resolveTimeZone } from "./zones.js";
