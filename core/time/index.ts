/**
 * Time zones: IANA zone names checked and resolved, cron occurrences and local wall-clock times in
 * a person's zone (luxon, cron-parser), and whether a message names a local time (chrono-node). Pure
 * functions; the current time comes from the caller.
 */
export { formatLocal, isValidTimeZone, nextCronTime, resolveTimeZone } from "./zones.js";
export { mentionsLocalTime, zoneGuesses } from "./mentions.js";
