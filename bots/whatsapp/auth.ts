import { ConfigError } from "../../core/errors.js";
import type { WhatsAppClientAuth } from "./port.js";
import { REMOTE_AUTH_CLIENT_ID, type GridFsSessionStore } from "./remote-store.js";

/** whatsapp-web.js RemoteAuth throws "Invalid backupSyncIntervalMs" under 60,000 ms. */
export const MIN_BACKUP_SYNC_INTERVAL_MS = 60_000;
/** Default RemoteAuth backup interval: 5 minutes. */
export const DEFAULT_BACKUP_SYNC_INTERVAL_MS = 300_000;

/**
 * Where the WhatsApp session lives: LocalAuth (the Chromium profile under DATA_DIR, the default) or
 * RemoteAuth (the profile is unpacked under DATA_DIR from the newest backup in `store` at start and
 * backed up every `backupSyncIntervalMs`: default 5 minutes, at least 60,000 ms).
 */
export type WhatsAppAuthOption = { kind: "local" } | { kind: "remote"; store: GridFsSessionStore; backupSyncIntervalMs?: number };

/**
 * The library-level auth for a channel whose strategy `dataPath` is `dataPath`: the RemoteAuth store is
 * bound to that same path, so it uploads the zip RemoteAuth writes there.
 * @throws ConfigError when `backupSyncIntervalMs` is under 60,000 ms (RemoteAuth would throw later,
 *   at launch, with a less helpful message).
 */
export function clientAuth(option: WhatsAppAuthOption, dataPath: string): WhatsAppClientAuth {
  if (option.kind === "local") return option;
  const backupSyncIntervalMs = option.backupSyncIntervalMs ?? DEFAULT_BACKUP_SYNC_INTERVAL_MS;
  if (!Number.isFinite(backupSyncIntervalMs) || backupSyncIntervalMs < MIN_BACKUP_SYNC_INTERVAL_MS) {
    throw new ConfigError(`WhatsApp RemoteAuth backupSyncIntervalMs is ${backupSyncIntervalMs} ms; whatsapp-web.js requires at least ${MIN_BACKUP_SYNC_INTERVAL_MS} ms`, [
      { key: "auth.backupSyncIntervalMs", expected: `a number of ms ≥ ${MIN_BACKUP_SYNC_INTERVAL_MS}` },
    ]);
  }
  return { kind: "remote", store: option.store.at(dataPath), clientId: REMOTE_AUTH_CLIENT_ID, backupSyncIntervalMs };
}
