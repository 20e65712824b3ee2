/**
 * The secret side of the process: the vault (encrypted under DATA_DIR, its values registered with
 * the log's redaction as they are read), the egress guard every tool request goes through (with the
 * vault's check that no value goes to an origin it is not bound to), and the setup page's store
 * (the model chosen there, its key in the vault).
 */
import type { Config } from "../core/config/index.js";
import { EgressGuard } from "../core/egress/index.js";
import { SecretVault } from "../core/secrets/index.js";
import { SetupStore } from "../web/api/index.js";

/** The vault, the egress guard, the vault's outbound check, and the setup page's store. */
export interface Secrets {
  vault: SecretVault;
  egress: EgressGuard;
  /** Whether `texts` carry a vault value to `origin` it is not bound to (every hop is checked). */
  secretCheck: (texts: readonly string[], origin: string) => ReturnType<SecretVault["unboundIn"]>;
  setup: SetupStore;
}

/** Opens the vault (FAMILIAR_SECRET_KEY, else a key file in DATA_DIR) and the setup store; throws on a bad key. */
export async function createSecrets(config: Config, parts: { dataDir: string; addSecret: (value: string, name?: string) => void }): Promise<Secrets> {
  const { dataDir } = parts;
  const vault = await SecretVault.open({ dataDir, ...(config.FAMILIAR_SECRET_KEY && { secretKey: config.FAMILIAR_SECRET_KEY }), addSecret: parts.addSecret });
  const secretCheck = (texts: readonly string[], origin: string) => vault.unboundIn(texts, origin);
  const egress = new EgressGuard({ privateHostsAllowed: config.PRIVATE_HOSTS_ALLOWED, outboundCheck: secretCheck });
  const setup = await SetupStore.open(dataDir, vault);
  return { vault, egress, secretCheck, setup };
}
