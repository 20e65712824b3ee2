/**
 * The runtime: the core assembled (`Familiar`, app/familiar.ts) with the settings that tune it, the
 * connectors (connections, calendars and mailboxes, app/connections.ts), the tools of the sandbox and the
 * connectors added to the core's own (Familiar's computer among them: app/computer.ts), and the jobs that belong to no task registered with the scheduler.
 */
import { webTools } from "../connectors/web/index.js";
import type { Clock } from "../core/clock.js";
import type { Config } from "../core/config/index.js";
import { createTokenCounter } from "../core/context/index.js";
import { asId } from "../core/ids.js";
import type { Logger } from "../core/log/index.js";
import { registerJobs } from "../jobs/index.js";
import { BrowserRuntime, browserTools } from "../sandbox/browser/index.js";
import { ArtifactShelf, artifactTools, renderPdf } from "../sandbox/artifacts/index.js";
import { computerTools } from "../sandbox/exec/index.js";
import { workspaceTools } from "../sandbox/workspace/index.js";
import { startComputer, type Computer } from "./computer.js";
import { createConnectors, watchArmedHook, type Connectors } from "./connections.js";
import { Familiar } from "./familiar.js";
import type { Models } from "./model.js";
import type { Secrets } from "./secrets.js";
import type { Storage } from "./store.js";

/** The running core and the sandbox and connector parts the rest of the process shows, starts or stops. */
export interface Runtime {
  familiar: Familiar;
  browser: BrowserRuntime;
  artifacts: ArtifactShelf;
  /** Familiar's computer (the sandbox probe and its status). */
  computer: Computer;
  connectors: Connectors;
}

/**
 * Builds the core and the connectors, adds every tool and registers the jobs; nothing runs until
 * `connectors.start()` and `familiar.start()`. Throws when a connector's store cannot be opened.
 */
export async function createRuntime(
  config: Config,
  parts: { storage: Storage; secrets: Secrets; models: Models; clock: Clock; logger: Logger; scrub: (text: string) => string; dataDir: string; workspace: { quotaBytes: number }; publicUrl: () => string },
): Promise<Runtime> {
  const { storage, secrets, models, clock, logger, dataDir, workspace } = parts;
  const { store, scheduler } = storage;
  const artifacts = new ArtifactShelf({ dataDir, repository: store.artifacts, clock, workspace, goalOf: async (taskId) => (await store.tasks.getTask(taskId))?.goalId ?? null });
  // Familiar's computer: probed in the background (a test run in bubblewrap); its tools are offered once it works.
  const computer = startComputer(config, dataDir, logger);
  const watchArmed = watchArmedHook();
  const familiar = new Familiar({
    store,
    scheduler,
    // The runtime asks for the model at each activation: whatever the setup page chose last.
    model: models.inUse.current,
    tokens: createTokenCounter(),
    clock,
    logger,
    contextTokenBudget: config.CONTEXT_TOKEN_BUDGET,
    maxSteps: config.MAX_STEPS_PER_ACTIVATION,
    inboundLimits: {
      perSender: config.INBOUND_LIMIT_PER_SENDER,
      perChat: config.INBOUND_LIMIT_PER_CHAT,
      global: config.INBOUND_LIMIT_GLOBAL,
      windowSeconds: config.INBOUND_LIMIT_WINDOW_SECONDS,
    },
    wakeupGraceMs: config.WAKEUP_GRACE_MS,
    modelBudgetTokensPerDay: config.MODEL_BUDGET_TOKENS_PER_DAY,
    publicUrl: parts.publicUrl,
    singleProcess: store.kind === "sqlite",
    notificationJudgement: config.NOTIFY_MODEL_JUDGEMENT,
    askedForPerHour: config.NOTIFY_ASKED_FOR_PER_HOUR,
    sentinel: { egress: secrets.egress, vault: secrets.vault, scrub: parts.scrub },
    allowFrom: config.ALLOW_FROM,
    owners: config.OWNER,
    localChatIsOwner: !config.LOCAL_CHAT_ALLOW_REMOTE,
    attachments: artifacts,
    media: models.media,
    watchArmed: watchArmed.hook,
  });
  const connectors = await createConnectors(config, { storage, vault: secrets.vault, core: familiar, watchArmed, clock, logger, dataDir, workspace, publicUrl: parts.publicUrl });
  // Chromium starts on the first browser tool call, not here.
  const browser = new BrowserRuntime({ chromiumPath: config.CHROMIUM_PATH, dataDir, egress: secrets.egress, secretCheck: secrets.secretCheck, logger, maxContexts: config.BROWSER_MAX_CONTEXTS, idleMs: config.BROWSER_IDLE_MS });
  familiar.addTools([
    ...webTools(secrets.egress),
    ...workspaceTools(dataDir, workspace),
    // A page readout gets about a quarter of the context budget (≈ 4 characters per token).
    ...browserTools({ runtime: browser, artifacts, dataDir, scrub: (text) => secrets.vault.scrub(text), maxReadChars: config.CONTEXT_TOKEN_BUDGET }),
    ...artifactTools({
      shelf: artifacts,
      outbound: familiar.outbound,
      printPdf: (html, pdfOptions) => browser.lend((b) => renderPdf(b, html, pdfOptions)),
      // A link to the artifact's page only where the web app is reachable from the person's devices.
      pageUrl: (artifact) => (config.PUBLIC_URL ? `${config.PUBLIC_URL.replace(/\/$/, "")}/a/${artifact.seriesId}` : null),
      offered: (personId) => browser.inUse(personId) || artifacts.hasArtifacts(personId),
    }),
    ...computerTools({ dataDir, workspace, status: () => computer.status, current: computer.current }),
    ...connectors.tools,
  ]);
  registerJobs(
    scheduler,
    {
      expireApprovals: () => familiar.approvals.expire(),
      sendDigest: (personId) => familiar.notifier.sendDigest(asId("person", personId)),
      syncCalendar: (connectionId) => connectors.syncCalendar(connectionId),
      syncMailbox: (connectionId) => connectors.syncMailbox(connectionId),
    },
    { logger, now: () => clock.now(), emailSessionMs: config.EMAIL_SYNC_SESSION_MS },
  );
  return { familiar, browser, artifacts, computer, connectors };
}
