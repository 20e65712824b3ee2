/**
 * Wiring of the core, in dependency order: the outbox (delivery, its loop, the outbound door),
 * Sentinel (its time, the approval flow, the gate, its views), the runtime (wake-ups, webhooks, the
 * task runner and its loop, the heartbeat), and the inbound side (chat commands, the door, access
 * control, the inbound handler). Only constructors and references: every behaviour is in core/.
 */
import { ChannelRegistry, TypingIndicators, type AttachmentSource } from "../core/channels/index.js";
import type { Clock } from "../core/clock.js";
import type { PersonId } from "../core/ids.js";
import { RollingSummaries, type ContextMedia, type TokenCounter } from "../core/context/index.js";
import type { EgressGuard } from "../core/egress/index.js";
import {
  AccessControl,
  CommandRegistry,
  Door,
  InboundHandler,
  InboundRateLimit,
  TimeZoneQuestion,
  type InboundLimits,
  registerCoreCommands,
  registerSecretCommands,
  registerSentinelCommands,
  registerSettingsCommands,
  type MediaIntake,
  type PressHandler,
} from "../core/inbound/index.js";
import type { Logger } from "../core/log/index.js";
import type { ModelClient } from "../core/model/index.js";
import { Notifier, notifyTools } from "../core/notify/index.js";
import { Outbound, OutboxDelivery, WebPresence, type FileLinker } from "../core/outbox/index.js";
import { SentinelClock, SessionTracker, type Policy } from "../core/policy/index.js";
import { ApprovalFlow, GoalControl, ModelBudget, ProactiveFlow, TaskRunner, WakeupFlow, WebhookEvents, coreTools } from "../core/runtime/index.js";
import { DueLoop, Heartbeat, type Scheduler } from "../core/scheduling/index.js";
import { SecretDesk, secretTools, type SecretVault } from "../core/secrets/index.js";
import { InertLinks, Sentinel, SentinelViews } from "../core/sentinel/index.js";
import type { ClaimedTask } from "../core/tasks/index.js";
import type { OutboxMessage } from "../core/outbox/index.js";
import type { Store } from "../core/storage/index.js";
import { ToolRegistry } from "../core/tools/index.js";

export interface FamiliarDeps {
  store: Store;
  scheduler: Scheduler;
  /** The configured model, or a function reading the current one (it can be set up while Familiar runs). */
  model: ModelClient | null | (() => ModelClient | null);
  tokens: TokenCounter;
  clock: Clock;
  logger: Logger;
  /** CONTEXT_TOKEN_BUDGET */
  contextTokenBudget: number;
  /** MAX_STEPS_PER_ACTIVATION */
  maxSteps: number;
  /** WAKEUP_GRACE_MS */
  wakeupGraceMs: number;
  /** Base URL people give outside services for webhooks, e.g. `https://familiar.example.com` (read when needed: the port may be chosen at listen). */
  publicUrl: () => string;
  /** One process owns the store (embedded SQLite): at start, leases left by a predecessor are taken over at once. */
  singleProcess: boolean;
  /** Lease on a running task or an outbox row being sent, ms (default 30 s; renewed by the heartbeat every third of it). */
  leaseMs?: number;
  /** MODEL_BUDGET_TOKENS_PER_DAY: model tokens per person and local day (0 or absent: unlimited; use is counted all the same). */
  modelBudgetTokensPerDay?: number;
  /** INBOUND_LIMIT_*: per sender, per chat and global inbound message limits (none when absent). */
  inboundLimits?: InboundLimits;
  /** Most activations running at once across all persons (default 16). */
  maxConcurrentActivations?: number;
  /** ALLOW_FROM: `channel:accountId` entries that may talk without pairing. */
  allowFrom?: readonly string[];
  /** OWNER: `channel:accountId` entries of the install's owner (default: the first ALLOW_FROM entry). */
  owners?: readonly string[];
  /** The local web chat serves only this machine, so its users count as the owner. */
  localChatIsOwner?: boolean;
  /**
   * Sentinel's parts: every tool call passes its policy, grants and approvals (required in
   * production). With a vault, the secret desk is made too (`/secret`, `request_secret`, the offer
   * after withheld text).
   */
  sentinel: { egress: EgressGuard; vault?: SecretVault; policy?: Policy; scrub?: (text: string) => string };
  /**
   * Let the model judge whether a proactive message is worth sending (strict JSON, bounded by the
   * rules; failures hold) whenever a model is configured — also one configured later. The app turns
   * it on by default (NOTIFY_MODEL_JUDGEMENT, default true); here it is off unless asked for.
   */
  notificationJudgement?: boolean;
  /** Cap on asked-for notifications per person and rolling hour (default 10; see core/notify). */
  askedForPerHour?: number;
  /** Where outbound attachments (artifacts) are read from. */
  attachments?: AttachmentSource;
  /** Links to a person's files, sent when a platform refuses an attachment as a file (also settable later: `CoreParts.fileLinks`). */
  fileLink?: FileLinker;
  /** Photos, voice notes, files and stickers: taken in on arrival (`intake`) and shown to the model (`context`). */
  media?: { intake: MediaIntake; context: ContextMedia };
  /** A watch re-armed (waits for the next connection change): the change dispatcher looks at the person again. */
  watchArmed?: (personId: PersonId) => void;
}

/** The assembled core's parts (see app/core.ts). */
export interface CoreParts {
  channels: ChannelRegistry;
  tools: ToolRegistry;
  commands: CommandRegistry;
  outbound: Outbound;
  outbox: OutboxDelivery;
  outboxLoop: DueLoop<OutboxMessage>;
  /** Which persons have a web chat page open (the web chat's live poll tells; delivery routing reads). */
  presence: WebPresence;
  /** The file linker delivery uses (the web app sets it once its signing key is loaded). */
  fileLinks: { current: FileLinker | null };
  notifier: Notifier;
  sentinel: Sentinel;
  approvals: ApprovalFlow;
  views: SentinelViews;
  secrets: SecretDesk | null;
  access: AccessControl;
  wakeups: WakeupFlow;
  goals: GoalControl;
  tasks: TaskRunner;
  taskLoop: DueLoop<ClaimedTask>;
  webhooks: WebhookEvents;
  heartbeat: Heartbeat;
  inbound: InboundHandler;
  presses: PressHandler[];
  /** The per-person daily model budget (what each person used today, and the limit). */
  budget: ModelBudget;
}

/** Wires the whole core for one process (`owner` is its lease owner id). */
export function wireCore(deps: FamiliarDeps, owner: string): CoreParts {
  const model = typeof deps.model === "function" ? deps.model : () => deps.model as ModelClient | null;
  const leaseMs = deps.leaseMs ?? 30_000;
  const channels = new ChannelRegistry(deps.logger);
  const tools = new ToolRegistry();
  const commands = new CommandRegistry();
  const outbox = wireOutbox(deps, owner, leaseMs, channels);
  // The task loop is made with the runner below; what comes first only needs to wake it.
  const tasks = { poke: () => runtime.taskLoop.poke() };
  const sentinel = wireSentinel(deps, outbox.outbound, tasks);
  const budget = new ModelBudget({ usage: deps.store.usage, clock: deps.clock, tokensPerDay: deps.modelBudgetTokensPerDay ?? 0, outbound: outbox.outbound });
  const notifier = new Notifier({ ...pick(deps), outbound: outbox.outbound, scheduler: deps.scheduler, judge: deps.notificationJudgement ? model : null, meter: budget.metered, ...(deps.askedForPerHour !== undefined && { askedForPerHour: deps.askedForPerHour }) });
  const secrets = deps.sentinel.vault ? new SecretDesk({ vault: deps.sentinel.vault, store: deps.store, clock: deps.clock, publicUrl: deps.publicUrl, outbound: outbox.outbound }) : null;
  const runtime = wireRuntime(deps, { owner, leaseMs, model, channels, tools, notifier, sentinel: sentinel.sentinel, outbound: outbox.outbound, tasks, budget });
  tools.add(...coreTools({ store: deps.store, clock: deps.clock, poke: tasks.poke, releaseHeld: (personId, goalId) => runtime.wakeups.releaseHeld(personId, goalId) }), ...notifyTools({ store: deps.store }));
  if (secrets) tools.add(...secretTools({ desk: secrets, outbound: outbox.outbound }));
  const presses: PressHandler[] = [sentinel.approvals.press];
  wireCommands(deps, { commands, views: sentinel.views, goals: runtime.goals, secrets });
  const inbound = wireInbound(deps, { commands, channels, outbound: outbox.outbound, taskLoop: runtime.taskLoop, presses, secrets, budget });
  return { channels, tools, commands, ...outbox, notifier, ...sentinel, secrets, ...runtime, ...inbound, presses, budget };
}

function pick(deps: FamiliarDeps) {
  return { store: deps.store, clock: deps.clock, logger: deps.logger };
}

/** The outbox: delivery through the channels, its loop, and the one outbound door that wakes it. */
function wireOutbox(deps: FamiliarDeps, owner: string, leaseMs: number, channels: ChannelRegistry) {
  const presence = new WebPresence(deps.clock);
  const fileLinks: { current: FileLinker | null } = { current: deps.fileLink ?? null };
  const outbox = new OutboxDelivery({
    ...pick(deps),
    owner,
    leaseMs,
    adapters: channels.all,
    presence,
    fileLink: (personId, artifactId) => fileLinks.current?.(personId, artifactId) ?? null,
    ...(deps.attachments && { attachments: deps.attachments }),
  });
  const outboxLoop = new DueLoop(outbox, { name: "outbox", clock: deps.clock, logger: deps.logger, maxInFlight: 8 });
  const outbound = new Outbound({ store: deps.store, clock: deps.clock, wake: () => outboxLoop.poke() });
  return { outbox, outboxLoop, outbound, presence, fileLinks };
}

/** Sentinel: its own time and sessions, the approval round trip, the gate, and what the person can read of it. */
function wireSentinel(deps: FamiliarDeps, outbound: Outbound, tasks: { poke(): void }) {
  const { store, clock, logger, scheduler } = deps;
  // Sentinel's own time (never behind what it saw) and the person's session, shared by the gate and the desk.
  const time = { clock: new SentinelClock(store, () => clock.now()), sessions: new SessionTracker(store) };
  const approvals = new ApprovalFlow({ store, clock, logger, outbound, scheduler, tasks, sentinel: time });
  const { egress, vault, policy, scrub } = deps.sentinel;
  const sentinel = new Sentinel({ store, egress, ...(vault && { vault }), ...(policy && { policy }), ...(scrub && { scrub }), logger, onApprovalRequested: approvals.requested, ...time });
  const views = new SentinelViews(store, time);
  return { approvals, sentinel, views };
}

/** The runtime: wake-ups, webhooks, the task runner with its loop, and the heartbeat of this process's leases. */
function wireRuntime(
  deps: FamiliarDeps,
  parts: {
    owner: string;
    leaseMs: number;
    model: () => ModelClient | null;
    channels: ChannelRegistry;
    tools: ToolRegistry;
    notifier: Notifier;
    sentinel: Sentinel;
    outbound: Outbound;
    tasks: { poke: () => void };
    budget: ModelBudget;
  },
) {
  const { store, clock, logger } = deps;
  const { owner, leaseMs, model, outbound } = parts;
  const wakeups = new WakeupFlow({ store, clock, logger, graceMs: deps.wakeupGraceMs, owner });
  const goals = new GoalControl({ store, clock, wakeups, tasks: parts.tasks });
  const webhooks = new WebhookEvents({ store, clock, publicUrl: deps.publicUrl, tasks: parts.tasks, outbound });
  const inertLinks = new InertLinks({ store, clock });
  const summaries = new RollingSummaries({ store, model, tokens: deps.tokens, logger, meter: parts.budget.metered });
  const typing = new TypingIndicators({ channel: parts.channels.get, store, logger });
  const activation = {
    tokens: deps.tokens,
    budget: deps.contextTokenBudget,
    maxSteps: deps.maxSteps,
    gate: parts.sentinel.gate,
    createHook: webhooks.create,
    ...(deps.media && { media: deps.media.context }),
  };
  const proactive = new ProactiveFlow({ store, notifier: parts.notifier, inertLinks: inertLinks.apply });
  const setupUrl = () => `${deps.publicUrl().replace(/\/$/, "")}/setup`;
  const tasks = new TaskRunner({ store, clock, logger, owner, leaseMs, model, activation, tools: parts.tools.all, wakeups, proactive, outbound, poke: parts.tasks.poke, typing: typing.start, summarize: summaries.summarize, inertLinks: inertLinks.apply, setupUrl, budget: parts.budget, keptEvents: webhooks.resumeKept, ...(deps.watchArmed && { watchArmed: deps.watchArmed }) });
  const taskLoop = new DueLoop(tasks, { name: "tasks", clock, logger, maxInFlight: deps.maxConcurrentActivations ?? 16 });
  const heartbeat = new Heartbeat({ store, clock, logger, owner, leaseMs });
  return { wakeups, goals, webhooks, tasks, taskLoop, heartbeat };
}

/** The inbound side: who may act at the door, access control (pairing, links, local users) and the inbound handler. */
function wireInbound(
  deps: FamiliarDeps,
  parts: { commands: CommandRegistry; channels: ChannelRegistry; outbound: Outbound; taskLoop: { poke(): void }; presses: PressHandler[]; secrets: SecretDesk | null; budget: ModelBudget },
) {
  const { store, clock, logger } = deps;
  const owners = deps.owners?.length ? deps.owners : (deps.allowFrom ?? []).slice(0, 1);
  const door = new Door({ store, clock, owners, localIsOwner: deps.localChatIsOwner ?? true });
  door.registerCommands(parts.commands);
  const access = new AccessControl({ store, clock, logger, allowFrom: deps.allowFrom ?? [], channel: parts.channels.get, door, outbound: parts.outbound });
  access.registerCommands(parts.commands);
  parts.presses.push(access.press);
  const timeZone = new TimeZoneQuestion({ store, clock, outbound: parts.outbound, turns: parts.taskLoop });
  parts.presses.push(timeZone.press);
  const inbound = new InboundHandler({
    store,
    clock,
    logger,
    commands: parts.commands,
    unknownSender: access.unknownSender,
    turns: parts.taskLoop,
    outbound: parts.outbound,
    pressHandlers: () => parts.presses,
    door,
    links: access.links,
    timeZone,
    ...(parts.secrets && { secrets: parts.secrets }),
    ...(parts.budget.limited && { budget: parts.budget }),
    ...(deps.media && { media: deps.media.intake }),
    ...(deps.inboundLimits && { rateLimit: new InboundRateLimit(deps.inboundLimits, clock) }),
  });
  return { access, inbound };
}

/** The chat commands of the core, Sentinel and the secret desk (the door and access control add theirs after). */
function wireCommands(deps: FamiliarDeps, parts: { commands: CommandRegistry; views: SentinelViews; goals: GoalControl; secrets: SecretDesk | null }) {
  const { store, clock } = deps;
  registerCoreCommands(parts.commands, { store, clock });
  registerSettingsCommands(parts.commands, { store, clock, goals: parts.goals });
  registerSentinelCommands(parts.commands, parts.views);
  if (parts.secrets) registerSecretCommands(parts.commands, parts.secrets);
}
