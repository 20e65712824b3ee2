/**
 * Familiar's computer: the sandbox probe started at once (a test run in bubblewrap, in the
 * background), its status once known, and that status as the setup page and `/healthz` show it.
 * Its tools (`run_code`, `run_command`) are offered only once the probe found the sandbox working.
 */
import type { Config } from "../core/config/index.js";
import type { Logger } from "../core/log/index.js";
import { detectSandbox, type SandboxStatus } from "../sandbox/exec/index.js";
import type { ComputerStatus } from "../web/api/index.js";

/** The computer's availability: `status` resolves when the probe ends (it never rejects). */
export interface Computer {
  status: Promise<SandboxStatus>;
  /** The status without waiting: null while the probe runs. */
  current: () => SandboxStatus | null;
  /** The status in words for the setup page and `/healthz`. */
  view: () => ComputerStatus;
}

/** Starts the probe (COMPUTER, COMPUTER_UID settings); logs once whether the computer is on and why not. */
export function startComputer(config: Config, dataDir: string, logger: Logger): Computer {
  let current: SandboxStatus | null = null;
  const status = detectSandbox({ dataDir, enabled: config.COMPUTER, uid: config.COMPUTER_UID, gid: config.COMPUTER_UID }).then((result) => {
    current = result;
    if (result.available) logger.info({ languages: result.runner.languages }, "Familiar's computer is on: run_code and run_command run in bubblewrap");
    else logger.warn({ reason: result.reason }, "Familiar's computer is off: run_code and run_command are not offered");
    return result;
  });
  const view = (): ComputerStatus =>
    current === null ? { state: "checking", reason: null, languages: [] } : current.available ? { state: "on", reason: null, languages: current.runner.languages } : { state: "off", reason: current.reason, languages: [] };
  return { status, current: () => current, view };
}
