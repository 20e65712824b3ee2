/**
 * The JSON APIs that have no sign-in and therefore stay on this machine: the old local chat page
 * and its API (`/api/local`), the older JSON dashboard, secrets and artifacts, and WhatsApp's
 * pairing QR.
 */
export { artifactsRouter } from "./artifacts.js";
export { localChatRouter } from "./chat-routes.js";
export { dashboardRouter } from "./dashboard.js";
export { pairingQrRouter } from "./pairing-qr.js";
export { secretsRouter } from "./secrets.js";
