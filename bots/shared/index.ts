/**
 * What the messenger adapters share: bounded downloads, per-chat ordering, long-poll waiters. Knows
 * no single messenger.
 */
export { downloadLimited } from "./download.js";
export { KeyedWaiters, type ActivityWait } from "./waiters.js";
