/**
 * The web app's server side: sign-in and sessions, the setup page (model, messengers, password),
 * the dashboard and chat APIs of the signed-in person, the one-time secret form, the per-person
 * chat log, and serving the bundle built from webui/.
 */
export { webApp } from "./app.js";
export { ChatLog, recordingAdapter } from "./chat-log.js";
export { MessengerSetupError, messengerBodies, pageMessengers, restartNotes, type MessengerSettings, type PageMessenger } from "./messenger-settings.js";
export { MessengerStatus, readReadme } from "./messenger-status.js";
export { fileLink, fileLinksRouter } from "./file-links.js";
export { WebSessions } from "./sessions.js";
export { clientFor, type ComputerStatus } from "./setup-api.js";
export { SetupStore } from "./setup-store.js";
export { plainErrors } from "./plain-errors.js";
