/**
 * What the server and the page (webui/) both read: message length limits and the activity log's
 * labels. Plain data; imports nothing.
 */
export { ACTIVITY_CATEGORIES, KIND_WORDS } from "./activity-kinds.js";
export {
  MESSAGE_BODY_MAX_BYTES,
  MESSAGE_COUNTER_FROM,
  MESSAGE_TEXT_MAX,
  formatCount,
  tooLongMessage,
} from "./message-limit.js";
