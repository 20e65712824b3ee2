/**
 * Inbound: an update from a messenger becomes a recorded message or a command — dedupe on the
 * platform's update id, the person resolved or paired (pairing.ts, links.ts), who may act at the
 * door (door.ts), media taken in, chat commands answered outside the conversation, the message
 * bound to a turn in one transaction. It never calls the model; the task loop answers.
 */
export { CommandRegistry, registerCoreCommands } from "./commands.js";
export { Door } from "./door.js";
export { InboundHandler, answerDeliveryKey, type PressHandler } from "./handler.js";
export { MediaIntake, type ReceivedFiles } from "./media.js";
export { InboundRateLimit, type InboundLimits } from "./rate-limit.js";
export { TimeZoneQuestion } from "./time-zone-question.js";
export { AccessControl } from "./pairing.js";
export { registerSecretCommands } from "./secret-commands.js";
export { registerConnectCommands } from "./connect-commands.js";
export { registerSentinelCommands } from "./sentinel-commands.js";
export { registerSettingsCommands } from "./settings-commands.js";
