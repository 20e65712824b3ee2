import type { Logger } from "../../core/log/index.js";
import type { WhatsAppAuthOption } from "./auth.js";
import type { WhatsAppLibrary } from "./port.js";

/** Options of `createWhatsAppChannel`, wired from settings by the composition root. */
export interface WhatsAppChannelOptions {
  /** DATA_DIR: the session (the Chromium profile) lives in `DATA_DIR/whatsapp-session/`. */
  dataDir: string;
  /** LocalAuth (default) or RemoteAuth with a MongoDB GridFS backup (MONGODB_URI set). */
  auth?: WhatsAppAuthOption;
  /** CHROMIUM_PATH. */
  chromiumPath: string;
  /** Group ids (`…@g.us`) from ALLOW_GROUPS (`whatsapp:` entries, prefix removed) read when mentioned. */
  groups?: readonly string[];
  logger: Logger;
  /** Called with every new pairing QR (raw string) so the local page can show it. */
  onQr?: (qr: string) => void;
  /** Called once when WhatsApp will not come back on its own (session invalid, or restarts exhausted). */
  onSessionInvalid?: (reason: string) => void;
  /** The library (default: the real whatsapp-web.js); tests pass a fake. */
  library?: WhatsAppLibrary;
  /** Restarts after a disconnect before giving up (default 5). */
  maxRestarts?: number;
  /** Backoff before restart n: `min(initialMs · 2^(n-1), maxMs)` (default 5 s … 5 min). */
  backoff?: { initialMs: number; maxMs: number };
}

/** What the connection is doing now. */
export type WhatsAppState = "stopped" | "starting" | "pairing" | "ready" | "restarting" | "gave_up";

