/**
 * The core assembled: the flows (inbound → turn, due task → activation, approval → resume, webhook
 * event → resume, proactive candidate → filter → outbox) built in dependency order by the wiring
 * functions of app/core.ts, and the small facade the composition root and the tests hold. It holds
 * no behaviour: each one lives in the room whose job it is (the vault offer in core/inbound, alerts
 * in core/outbox, inert links in core/sentinel, summaries in core/context, local persons in
 * core/inbound/pairing.ts, typing in core/channels).
 */
import { randomUUID } from "node:crypto";
import type { ChannelAdapter, ChannelRegistry, ChannelsStarted, InboundEvent, InboundOutcome } from "../core/channels/index.js";
import type { AccessControl, CommandRegistry, PressHandler } from "../core/inbound/index.js";
import type { Notifier } from "../core/notify/index.js";
import type { FileLinker, Outbound, OutboxDelivery, WebPresence } from "../core/outbox/index.js";
import type { ApprovalFlow, GoalControl, ModelBudget, TaskRunner, WakeupFlow, WebhookEvents } from "../core/runtime/index.js";
import { takeOverLeases, type DueLoop } from "../core/scheduling/index.js";
import type { SecretDesk } from "../core/secrets/index.js";
import type { Sentinel, SentinelViews } from "../core/sentinel/index.js";
import type { ChannelName } from "../core/channels/index.js";
import type { ClaimedTask } from "../core/tasks/index.js";
import type { OutboxMessage } from "../core/outbox/index.js";
import type { ToolDefinition } from "../core/tools/index.js";
import { retiredJobNames } from "../jobs/index.js";
import { wireCore, type CoreParts, type FamiliarDeps } from "./core.js";

/** The running core: its parts, and start / stop. */
export class Familiar {
  /** This process's lease owner id: tasks and outbox rows it works on are leased to it. */
  readonly owner = `proc:${randomUUID()}`;
  readonly channels: ChannelRegistry;
  readonly commands: CommandRegistry;
  readonly outbound: Outbound;
  readonly outbox: OutboxDelivery;
  readonly outboxLoop: DueLoop<OutboxMessage>;
  /** Which persons have a web chat page open (the web chat's live poll tells; delivery routing reads). */
  readonly presence: WebPresence;
  /** The download-link maker delivery uses for refused files (set by the web app). */
  readonly fileLinks: { current: FileLinker | null };
  readonly notifier: Notifier;
  readonly sentinel: Sentinel;
  readonly approvals: ApprovalFlow;
  readonly views: SentinelViews;
  /** The secret desk (null without a vault). */
  readonly secrets: SecretDesk | null;
  readonly access: AccessControl;
  readonly wakeups: WakeupFlow;
  readonly goals: GoalControl;
  readonly tasks: TaskRunner;
  readonly taskLoop: DueLoop<ClaimedTask>;
  readonly webhooks: WebhookEvents;
  /** The per-person daily model budget: what each person used today and the limit (MODEL_BUDGET_TOKENS_PER_DAY). */
  readonly budget: ModelBudget;
  /** The inbound sink every channel adapter is started with (`InboundHandler.handle`). */
  readonly handleInbound: (event: InboundEvent) => Promise<InboundOutcome>;
  private readonly parts: CoreParts;

  constructor(readonly deps: FamiliarDeps) {
    const parts = wireCore(deps, this.owner);
    this.parts = parts;
    ({ channels: this.channels, commands: this.commands, outbound: this.outbound, outbox: this.outbox, outboxLoop: this.outboxLoop, presence: this.presence, fileLinks: this.fileLinks } = parts);
    ({ notifier: this.notifier, sentinel: this.sentinel, approvals: this.approvals, views: this.views, secrets: this.secrets } = parts);
    ({ access: this.access, wakeups: this.wakeups, goals: this.goals, tasks: this.tasks, taskLoop: this.taskLoop, webhooks: this.webhooks } = parts);
    this.budget = parts.budget;
    this.handleInbound = parts.inbound.handle;
  }

  /** Installs a channel adapter (before `start`, or while running for one started by the caller). */
  addChannel(adapter: ChannelAdapter): void {
    this.channels.add(adapter);
  }

  /** The installed adapter of a channel, if any. */
  channel(name: ChannelName): ChannelAdapter | undefined {
    return this.channels.get(name);
  }

  /** Adds tools every activation is offered (web tools through Sentinel, the sandbox's, …). */
  addTools(tools: readonly ToolDefinition[]): void {
    this.parts.tools.add(...tools);
  }

  /** Adds a handler of button presses (tried after the approval cards'). */
  onPress(handler: PressHandler): void {
    this.parts.presses.push(handler);
  }

  /**
   * Starts every installed channel (one that fails to start is reported and the others keep
   * running), takes over what a dead predecessor left (embedded mode), and starts the task and
   * outbox loops: everything due — unanswered messages, wake-ups, interrupted activations,
   * undelivered messages — is found by the same claims.
   */
  async start(): Promise<ChannelsStarted> {
    const { store, scheduler, clock, logger } = this.deps;
    const channels = await this.channels.startAll(this.handleInbound);
    if (this.deps.singleProcess) {
      const taken = await takeOverLeases(store, this.owner, clock.now());
      if (taken.tasks + taken.outbox > 0) logger.info(taken, "took over work left by a previous process");
    }
    for (const name of retiredJobNames) await scheduler.cancelAll(name);
    // A crash between storing an approval request and queueing its card left the task waiting on a card never sent.
    const pendingApprovals = await this.approvals.recoverCards();
    if (pendingApprovals > 0) logger.info({ pendingApprovals }, "checked the cards of pending approval requests");
    this.parts.heartbeat.start();
    this.taskLoop.start();
    this.outboxLoop.start();
    return channels;
  }

  /** Stops claiming work, waits (up to `deadlineMs`) for what runs, then stops the channels. */
  async stop(deadlineMs: number): Promise<void> {
    await this.taskLoop.stop(deadlineMs);
    await this.outboxLoop.stop(deadlineMs);
    await this.parts.heartbeat.stop();
    await this.channels.stopAll();
    await this.deps.tokens.close();
  }
}
