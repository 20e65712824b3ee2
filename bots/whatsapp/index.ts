/**
 * WhatsApp (whatsapp-web.js): WhatsApp Web driven in Chromium, formatting and polls as cards, the
 * session kept locally or in MongoDB GridFS. Loaded only when WHATSAPP_ENABLED is set.
 */
export { createWhatsAppChannel, type WhatsAppChannel } from "./channel.js";
export { createGridFsSessionStore } from "./remote-store.js";
