import { randomUUID } from "node:crypto";
import type { AttachmentSource, ChannelAdapter, InboundEvent, InboundOutcome } from "../core/channels/index.js";
import type { Clock } from "../core/clock.js";
import { type ContextMedia, updateRollingSummary, type TokenCounter } from "../core/context/index.js";
import type { PersonId } from "../core/ids.js";
import {
  AccessControl,
  CommandRegistry,
  registerCoreCommands,
  Door,
  answerDeliveryKey,
  InboundHandler,
  type PressHandler,
  type MediaIntake,
  registerSentinelCommands,
  registerSettingsCommands,
  registerSecretCommands,
} from "../core/inbound/index.js";
import type { Logger } from "../core/log/index.js";
import type { ModelClient } from "../core/model/index.js";
import { Notifier, notifyTools } from "../core/notify/index.js";
import { OutboxDelivery, WebPresence, type FileLinker } from "../core/outbox/index.js";
import {
  ApprovalFlow,
  ProactiveFlow,
  TaskRunner,
  WakeupFlow,
  WebhookEvents,
  type HookEventResult,
  coreTools,
} from "../core/runtime/index.js";
import { DueLoop, Heartbeat, type Scheduler } from "../core/scheduling/index.js";
import type { EgressGuard } from "../core/egress/index.js";
import { type Policy, SentinelClock, SessionTracker } from "../core/policy/index.js";
import { Sentinel, allowedLinkHosts, inertLinks, SentinelViews } from "../core/sentinel/index.js";
import { type SecretDesk, screenInbound, secretTools, type SecretVault } from "../core/secrets/index.js";
import type { Store, ChannelName, ClaimedTask, OutboxMessage, Person } from "../core/storage/index.js";
import type { ToolDefinition } from "../core/tools/index.js";

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
  /** Most activations running at once across all persons (default 16). */
  maxConcurrentActivations?: number;
  /** ALLOW_FROM: `channel:accountId` entries that may talk without pairing. */
  allowFrom?: readonly string[];
  /** OWNER: `channel:accountId` entries of the install's owner (default: the first ALLOW_FROM entry). */
  owners?: readonly string[];
  /** The local web chat serves only this machine, so its users count as the owner. */
  localChatIsOwner?: boolean;
  /** Sentinel's parts: every tool call passes its policy, grants and approvals (required in production). */
  sentinel: { egress: EgressGuard; vault?: SecretVault; policy?: Policy; scrub?: (text: string) => string };
  /** The secret desk (one-time links to store a secret): enables `/secret`, `request_secret` and the offer after withheld text. */
  secrets?: SecretDesk;
  /**
   * Let the model judge whether a proactive message is worth sending (strict JSON, bounded by the
   * rules; failures hold) whenever a model is configured — also one configured later. The app turns
   * it on by default (NOTIFY_MODEL_JUDGEMENT, default true); here it is off unless asked for.
   */
  notificationJudgement?: boolean;
  /** Cap on asked-for notifications per person and rolling hour (default 10; see core/notify). */
  askedForPerHour?: number;
  /** How long processed platform update ids are kept for redelivery dedupe, ms (default 14 days). */
  inboundRetentionMs?: number;
  /** Where outbound attachments (artifacts) are read from. */
  attachments?: AttachmentSource;
  /** Links to a person's files, sent when a platform refuses an attachment as a file. */
  fileLink?: FileLinker;
  /** Photos, voice notes, files and stickers: taken in on arrival (`intake`) and shown to the model (`context`). */
  media?: { intake: MediaIntake; context: ContextMedia };
}

/** Job names Familiar no longer uses (round 1 kept wake-ups and retries in Agenda); purged at start. */
const retiredJobNames = ["task.wake", "task.resume", "outbox.deliver"] as const;

/**
 * The core assembled: the flows (inbound → turn, due task → activation, approval → resume, webhook
 * event → resume, proactive candidate → filter → outbox) built in dependency order, plus the public
 * face adapters and the composition root use. It holds no behaviour of its own beyond wiring.
 */
export class Familiar {
  /** This process's lease owner id: tasks and outbox rows it works on are leased to it. */
  readonly owner = `proc:${randomUUID()}`;
  readonly commands = new CommandRegistry();
  readonly outbox: OutboxDelivery;
  /** Which persons have a web chat page open (the web chat's live poll reports; delivery routing reads). */
  readonly presence: WebPresence;
  readonly outboxLoop: DueLoop<OutboxMessage>;
  readonly notifier: Notifier;
  readonly sentinel: Sentinel;
  readonly approvals: ApprovalFlow;
  readonly views: SentinelViews;
  readonly access: AccessControl;
  readonly wakeups: WakeupFlow;
  readonly tasks: TaskRunner;
  readonly taskLoop: DueLoop<ClaimedTask>;
  readonly webhooks: WebhookEvents;
  private readonly heartbeat: Heartbeat;
  private readonly adapters = new Map<ChannelName, ChannelAdapter>();
  private readonly inbound: InboundHandler;
  private readonly pressHandlers: PressHandler[] = [];
  private readonly tools: ToolDefinition[];
  private readonly creatingLocal = new Map<string, Promise<Person>>();

  constructor(readonly deps: FamiliarDeps) {
    const { store, scheduler, clock, logger } = deps;
    const leaseMs = deps.leaseMs ?? 30_000;
    const owner = this.owner;
    const model = typeof deps.model === "function" ? deps.model : () => deps.model as ModelClient | null;
    const adapters = () => this.adapters;

    this.presence = new WebPresence(clock);
    this.outbox = new OutboxDelivery({
      store,
      clock,
      logger,
      owner,
      leaseMs,
      adapters,
      presence: this.presence,
      ...(deps.attachments && { attachments: deps.attachments }),
      ...(deps.fileLink && { fileLink: deps.fileLink }),
    });
    this.outboxLoop = new DueLoop(this.outbox, { name: "outbox", clock, logger, maxInFlight: 8 });
    const outbox = this.outboxLoop;
    // The task loop is created below; these flows only need to wake it.
    const pokeTasks = () => this.taskLoop.poke();

    this.notifier = new Notifier({ store, clock, logger, outbox, scheduler, judge: deps.notificationJudgement ? model : null, ...(deps.askedForPerHour !== undefined && { askedForPerHour: deps.askedForPerHour }) });
    // Sentinel's own time (never behind what it saw) and the person's session, shared by the facade and the desk.
    const sentinelTime = { clock: new SentinelClock(store, () => clock.now()), sessions: new SessionTracker(store) };
    this.approvals = new ApprovalFlow({ store, clock, logger, outbox, scheduler, tasks: { poke: pokeTasks }, sentinel: sentinelTime });
    this.sentinel = new Sentinel({
      store,
      egress: deps.sentinel.egress,
      ...(deps.sentinel.vault && { vault: deps.sentinel.vault }),
      ...(deps.sentinel.policy && { policy: deps.sentinel.policy }),
      ...(deps.sentinel.scrub && { scrub: deps.sentinel.scrub }),
      logger,
      onApprovalRequested: this.approvals.requested,
      ...sentinelTime,
    });
    this.views = new SentinelViews(store, sentinelTime);
    this.wakeups = new WakeupFlow({ store, clock, logger, graceMs: deps.wakeupGraceMs, owner });
    this.webhooks = new WebhookEvents({ store, clock, publicUrl: deps.publicUrl, pokeTasks, pokeOutbox: () => outbox.poke() });
    this.tools = [...coreTools({ store, clock, poke: pokeTasks, releaseHeld: (personId, goalId) => this.wakeups.releaseHeld(personId, goalId) }), ...notifyTools({ store })];
    this.tasks = new TaskRunner({
      store,
      clock,
      logger,
      owner,
      leaseMs,
      model,
      activation: {
        tokens: deps.tokens,
        budget: deps.contextTokenBudget,
        maxSteps: deps.maxSteps,
        gate: (inner, activation) =>
          this.sentinel.wrap(inner, { tainted: activation.tainted, chainDepth: activation.chainDepth, sessionId: activation.sessionId, ...(activation.taintSource !== null && { taintSource: activation.taintSource }) }),
        createHook: (person, task, description) => this.webhooks.create(person, task, description),
        ...(deps.media && { media: deps.media.context }),
      },
      tools: () => this.tools,
      wakeups: this.wakeups,
      proactive: new ProactiveFlow({ store, notifier: this.notifier, inertLinks: (person, text) => this.inertLinks(person, text) }),
      inertLinks: (person, text) => this.inertLinks(person, text),
      outbox,
      poke: pokeTasks,
      typing: (person, channel) => this.startTyping(person.id, channel),
      summarize: (person, keepFromSeq) => this.summarize(person, keepFromSeq),
      setupUrl: () => `${deps.publicUrl().replace(/\/$/, "")}/setup`,
    });
    this.taskLoop = new DueLoop(this.tasks, { name: "tasks", clock, logger, maxInFlight: deps.maxConcurrentActivations ?? 16 });
    this.heartbeat = new Heartbeat({ store, clock, logger, owner, leaseMs });

    registerCoreCommands(this.commands, { store, clock });
    registerSettingsCommands(this.commands, {
      store,
      clock,
      resumeDue: async (personId) => {
        const released = await this.wakeups.releaseHeld(personId);
        pokeTasks();
        return released;
      },
    });
    registerSentinelCommands(this.commands, this.views);
    if (deps.secrets) {
      registerSecretCommands(this.commands, deps.secrets);
      this.tools.push(...secretTools({ desk: deps.secrets, store, clock, pokeOutbox: () => outbox.poke() }));
    }
    const owners = deps.owners?.length ? deps.owners : (deps.allowFrom ?? []).slice(0, 1);
    const door = new Door({ store, clock, owners, localIsOwner: deps.localChatIsOwner ?? true });
    door.registerCommands(this.commands);
    this.access = new AccessControl({ store, clock, logger, allowFrom: deps.allowFrom ?? [], channel: (name) => this.adapters.get(name), door });
    this.access.registerCommands(this.commands);
    this.pressHandlers.push(this.approvals.press);
    this.inbound = new InboundHandler({
      store,
      clock,
      logger,
      commands: this.commands,
      unknownSender: async (event) => (event.channel === "local" ? this.localPerson(event) : this.access.unknownSender(event)),
      onMessage: pokeTasks,
      answer: (person, event, text) => this.answer(person, event, text),
      pressHandlers: () => this.pressHandlers,
      admit: (event, person) => door.admits(event, person),
      links: this.access.links,
      ...(deps.media && { media: deps.media.intake }),
    });
  }

  /** Registers a channel adapter (before `start`). */
  addChannel(adapter: ChannelAdapter): void {
    this.adapters.set(adapter.channel, adapter);
  }

  /** The running adapter of a channel, if any. */
  channel(name: ChannelName): ChannelAdapter | undefined {
    return this.adapters.get(name);
  }

  /** Adds tools every activation gets (web tools through Sentinel, …). */
  addTools(tools: ToolDefinition[]): void {
    this.tools.push(...tools);
  }

  onPress(handler: PressHandler): void {
    this.pressHandlers.push(handler);
  }

  /** Entry point for adapters: resolves when the event is durably recorded (acknowledge the platform then). */
  handleInbound = async (event: InboundEvent): Promise<InboundOutcome> => {
    // Secret-looking text (passwords, keys, one-time codes) is withheld before anything keeps or reads it.
    const screened = screenInbound(event);
    const outcome = await this.inbound.handle(screened.event);
    if (screened.kinds.length > 0 && outcome.status === "accepted") await this.offerVault(screened.event, screened.kinds);
    return outcome;
  };

  /** After withheld text: tells the person it was not kept and offers the vault's one-time link. */
  private async offerVault(event: InboundEvent, kinds: readonly string[]): Promise<void> {
    const { store, clock, logger } = this.deps;
    logger.info({ channel: event.channel, kinds }, "withheld secret-looking text from an inbound message");
    const identity = await store.persons.findIdentity(event.channel, event.accountId);
    if (!identity) return;
    const what = kinds.map((k) => k.replace(/_/g, " ")).join(", ");
    const why = `Part of that looked like a secret (${what}), so I did not keep it or read it.\n`;
    const text = this.deps.secrets ? this.deps.secrets.offerText(identity.personId, null, why) : `${why}Secrets belong in the vault, not in chat.`;
    await store.outbox.enqueueOutbound({ personId: identity.personId, deliveryKey: `secret-offer:${event.channel}:${event.updateId}`, text, channel: event.channel }, clock.now());
    this.outboxLoop.poke();
  }

  /** A webhook call (see WebhookEvents.receive). */
  handleHookEvent(hookId: string, secret: string, body: string): Promise<HookEventResult> {
    return this.webhooks.receive(hookId, secret, body);
  }

  /**
   * Starts every registered channel (a channel that fails to start is reported and the others keep
   * running), takes over what a dead predecessor left (embedded mode), and starts the task and outbox
   * loops: everything due — unanswered messages, wake-ups, interrupted activations, undelivered
   * messages — is found by the same claims.
   */
  async start(): Promise<{ started: ChannelName[]; failed: { channel: ChannelName; error: string }[] }> {
    const { store, scheduler, clock, logger } = this.deps;
    const started: ChannelName[] = [];
    const failed: { channel: ChannelName; error: string }[] = [];
    for (const [name, adapter] of this.adapters) {
      try {
        await adapter.start(this.handleInbound);
        started.push(name);
      } catch (err) {
        this.adapters.delete(name);
        failed.push({ channel: name, error: (err as Error).message });
        logger.error({ channel: name, err }, "channel failed to start; the others keep running");
      }
    }
    if (this.deps.singleProcess) {
      const now = clock.now();
      const tasks = await store.tasks.expireForeignLeases({ owner: this.owner, now });
      const rows = await store.outbox.expireForeignLeases({ owner: this.owner, now });
      if (tasks + rows > 0) logger.info({ tasks, outbox: rows }, "took over work left by a previous process");
    }
    for (const name of retiredJobNames) await scheduler.cancelAll(name);
    // A crash between storing an approval request and queueing its card left the task waiting on a card never sent.
    const pendingApprovals = await this.approvals.recoverCards();
    if (pendingApprovals > 0) logger.info({ pendingApprovals }, "checked the cards of pending approval requests");
    this.heartbeat.start();
    this.taskLoop.start();
    this.outboxLoop.start();
    return { started, failed };
  }

  /** Stops claiming work, waits (up to `deadlineMs`) for what runs, then stops the channels. */
  async stop(deadlineMs: number): Promise<void> {
    await this.taskLoop.stop(deadlineMs);
    await this.outboxLoop.stop(deadlineMs);
    await this.heartbeat.stop();
    for (const adapter of this.adapters.values()) {
      try {
        await adapter.stop();
      } catch (err) {
        this.deps.logger.warn({ err, channel: adapter.channel }, "channel did not stop cleanly");
      }
    }
    await this.deps.tokens.close();
  }

  /** Sends a direct answer (not part of the conversation) through the outbox on the event's channel. */
  async answer(person: Person, event: InboundEvent, text: string): Promise<void> {
    await this.deps.store.outbox.enqueueOutbound(
      { personId: person.id, deliveryKey: answerDeliveryKey(event), text, channel: event.channel },
      this.deps.clock.now(),
    );
    this.outboxLoop.poke();
  }

  /**
   * Tells every person who uses `failing` about a problem with it, on another of their channels
   * (once per day and person, by delivery key). Used when WhatsApp's session becomes invalid.
   */
  async alertOnOtherChannel(failing: ChannelName, text: string): Promise<number> {
    const { store, clock } = this.deps;
    let told = 0;
    let after: string | undefined;
    do {
      const page = await store.persons.listPersons({ limit: 200, ...(after && { after }) });
      for (const person of page.items) {
        const identities = await store.persons.listIdentities(person.id);
        if (!identities.some((i) => i.channel === failing)) continue;
        const other = identities.find((i) => i.channel !== failing && !i.unreachable && this.adapters.has(i.channel));
        if (!other) continue;
        const day = clock.now().toISOString().slice(0, 10);
        await store.outbox.enqueueOutbound({ personId: person.id, channel: other.channel, deliveryKey: `alert:${failing}:${day}:${person.id}`, text }, clock.now());
        told++;
      }
      after = page.next;
    } while (after);
    if (told > 0) this.outboxLoop.poke();
    return told;
  }

  /** What a tainted activation says, with links to hosts neither granted nor the person's own made inert (audited). */
  private async inertLinks(person: Person, text: string): Promise<string> {
    const { store, clock } = this.deps;
    const result = inertLinks(text, await allowedLinkHosts(store, person.id, clock.now()));
    if (result.inert.length > 0) {
      await store.audit.appendAudit({
        personId: person.id,
        kind: "sentinel.inert_links",
        summary: `Links to ${result.inert.slice(0, 5).join(", ")} in a reply from a tainted activation shown as text`,
        data: { hosts: result.inert.slice(0, 20) },
      });
    }
    return result.text;
  }

  /** Folds older turns into the rolling summary (best effort: a failure only logs). */
  private async summarize(person: Person, keepFromSeq: number): Promise<void> {
    const model = typeof this.deps.model === "function" ? this.deps.model() : this.deps.model;
    if (!model) return;
    try {
      await updateRollingSummary({ store: this.deps.store, model, tokens: this.deps.tokens, person, keepFromSeq });
    } catch (err) {
      this.deps.logger.warn({ err, personId: person.id }, "rolling summary not updated");
    }
  }

  /** The local chat is trusted (loopback only unless allowed): its users become persons on first message. */
  private localPerson(event: InboundEvent): Promise<Person> {
    // Two first messages of a new user at once must create one person, not two.
    const pending = this.creatingLocal.get(event.accountId);
    if (pending) return pending;
    const { store } = this.deps;
    const creation = (async () => {
      const existing = await store.persons.findIdentity("local", event.accountId);
      const known = existing && (await store.persons.getPerson(existing.personId));
      if (known) return known;
      const person = await store.persons.createPerson({ displayName: event.displayName ?? event.accountId });
      await store.persons.addIdentity({ personId: person.id, channel: "local", accountId: event.accountId, address: event.address });
      return person;
    })().finally(() => this.creatingLocal.delete(event.accountId));
    this.creatingLocal.set(event.accountId, creation);
    return creation;
  }

  /**
   * Starts a typing indicator on `channel` (where the person wrote), renewed every 4 s until stopped.
   * Channels without a typing indicator cost nothing.
   */
  private startTyping(personId: PersonId, channel: ChannelName): () => void {
    const adapter = this.adapters.get(channel);
    if (!adapter?.typing) return () => undefined;
    const typing = adapter.typing.bind(adapter);
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const tick = async () => {
      if (stopped) return;
      const identity = (await this.deps.store.persons.listIdentities(personId)).find((i) => i.channel === channel);
      if (identity && !stopped) await typing({ accountId: identity.accountId, address: identity.address });
      if (!stopped) timer = setTimeout(() => void tick().catch((err: unknown) => this.deps.logger.debug({ err, personId }, "typing indicator failed")), 4_000).unref();
    };
    void tick().catch((err: unknown) => this.deps.logger.debug({ err, personId }, "typing indicator failed"));
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

}
