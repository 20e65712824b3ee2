/**
 * The HTTP plumbing: the one express server of the process (health, JSON scrubbing), request bodies
 * read safely before any parser or signature check, and the loopback guard. Messenger webhooks and
 * the web APIs mount on it; it knows neither.
 */
export {
  MAX_JSON_DEPTH,
  boundedJson,
  jsonDepth,
  readBody,
  requireContentType,
  type Refusal,
  type RefusalSink,
  type WithRawBody,
} from "./body.js";
export { ALLOW_REMOTE_SETTING, checkExpressRequest } from "./loopback.js";
export { HttpServer } from "./server.js";
