/**
 * Slack channel adapter (Bolt for JavaScript 5): `createSlackChannel` for the composition root, plus
 * the pure pieces (rendering, layout, inbound mapping) for tests and tools.
 */
export { createSlackChannel, SlackChannel, SLACK_EVENTS_PATH, type RouterHost, type SlackChannelOptions } from "./channel.js";
export { layoutMessage, SLACK_LIMITS, type SlackLayoutLimits, type SlackMessagePart } from "./layout.js";
export { renderSlackSections, escapeMrkdwn } from "./render.js";
export { toInboundMessage, toInboundPress } from "./inbound.js";
export { SlackSetupError } from "./errors.js";
