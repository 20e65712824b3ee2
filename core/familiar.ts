import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ChannelAdapter, InboundEvent, InboundOutcome } from "./channels/port.js";
import type { Clock } from "./clock.js";
import type { ContextMedia } from "./context/attachments.js";
import type { TokenCounter } from "./context/tokens.js";
import { asId, type HookId, type PersonId } from "./ids.js";
import { AccessControl } from "./inbound/access.js";
import { CommandRegistry, registerCoreCommands } from "./inbound/commands.js";
import { answerDeliveryKey, InboundHandler, type PressHandler } from "./inbound/handler.js";
import type { MediaIntake } from "./inbound/media.js";
import { registerSentinelCommands } from "./inbound/sentinel-commands.js";
import { registerSettingsCommands } from "./inbound/settings-commands.js";
import type { Logger } from "./log.js";
import type { ModelClient } from "./model/port.js";
import { Notifier, digestJobName } from "./notify/notifier.js";
import { OutboxDelivery } from "./outbox/delivery.js";
import { ApprovalFlow, approvalExpiryJobName } from "./runtime/approvals.js";
import { PersonQueue } from "./runtime/person-queue.js";
import { TaskRuntime, resumeJobName } from "./runtime/tasks.js";
import { TurnRuntime } from "./runtime/turns.js";
import type { Scheduler } from "./scheduling/scheduler.js";
import type { EgressGuard } from "./sentinel/egress.js";
import type { Policy } from "./sentinel/policy.js";
import { Sentinel } from "./sentinel/sentinel.js";
import type { SecretVault } from "./sentinel/vault.js";
import { SentinelViews } from "./sentinel/views.js";
import type { Store } from "./storage/ports.js";
import type { ChannelName, Person, Task } from "./storage/types.js";
import { coreTools, jobNames } from "./tools/core-tools.js";
import type { ToolDefinition } from "./tools/tool.js";

/** Job that retries a person's outbox after a transient delivery failure. */
export const outboxJobName = "outbox.deliver";

export interface FamiliarDeps {
  store: Store;
  scheduler: Scheduler;
  model: ModelClient | null;
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
  /** One process owns the store (embedded SQLite): take over leases of a dead predecessor at start. */
  singleProcess: boolean;
  /** Lease on a running task, ms (default 2 min). */
  taskLeaseMs?: number;
  /** Most activations running at once across all persons. */
  maxConcurrentActivations?: number;
  /** ALLOW_FROM: `channel:accountId` entries that may talk without pairing. */
  allowFrom?: readonly string[];
  /** Sentinel's parts: every tool call passes its policy, grants and approvals (required in production). */
  sentinel: { egress: EgressGuard; vault?: SecretVault; policy?: Policy };
  /** Let the model judge whether a proactive message is worth sending (strict JSON; failures hold). */
  notificationJudgement?: boolean;
  /** Photos, voice notes, files and stickers: taken in on arrival (`intake`) and shown to the model (`context`). */
  media?: { intake: MediaIntake; context: ContextMedia };
}

/**
 * The core's public face for adapters and the composition root: inbound events in, outbound
 * messages out through the registered channel adapters, with commands, turns, background tasks,
 * the notification filter and the outbox wired together.
 */
export class Familiar {
  readonly commands = new CommandRegistry();
  readonly queue: PersonQueue;
  readonly outbox: OutboxDelivery;
  readonly notifier: Notifier;
  readonly tasks: TaskRuntime;
  readonly turns: TurnRuntime;
  readonly sentinel: Sentinel;
  readonly approvals: ApprovalFlow;
  readonly views: SentinelViews;
  readonly access: AccessControl;
  private readonly adapters = new Map<ChannelName, ChannelAdapter>();
  private readonly inbound: InboundHandler;
  private readonly pressHandlers: PressHandler[] = [];
  private readonly extraTools: ToolDefinition[] = [];
  private readonly baseTools: ToolDefinition[];
  private readonly creatingLocal = new Map<string, Promise<Person>>();

  constructor(readonly deps: FamiliarDeps) {
    const { store, scheduler, clock, logger } = deps;
    this.queue = new PersonQueue(deps.maxConcurrentActivations ?? 16);
    this.baseTools = coreTools({ store, scheduler, clock });
    this.outbox = new OutboxDelivery({
      store,
      clock,
      logger,
      adapters: () => this.adapters,
      onRetryScheduled: async (personId, at) => {
        await scheduler.schedule({ name: outboxJobName, key: personId, data: { personId }, timing: { kind: "at", at } });
      },
    });
    this.approvals = new ApprovalFlow({ store, clock, logger, outbox: this.outbox, scheduler, tasks: () => this.tasks });
    this.sentinel = new Sentinel({
      store,
      egress: deps.sentinel.egress,
      ...(deps.sentinel.vault && { vault: deps.sentinel.vault }),
      ...(deps.sentinel.policy && { policy: deps.sentinel.policy }),
      logger,
      onApprovalRequested: this.approvals.requested,
      now: () => clock.now(),
    });
    this.views = new SentinelViews(store, () => clock.now());
    this.notifier = new Notifier({ store, clock, logger, outbox: this.outbox, scheduler, judge: deps.notificationJudgement ? deps.model : null });
    this.tasks = new TaskRuntime({
      store,
      model: deps.model,
      tokens: deps.tokens,
      clock,
      logger,
      queue: this.queue,
      scheduler,
      notifier: this.notifier,
      budget: deps.contextTokenBudget,
      maxSteps: deps.maxSteps,
      tools: () => [...this.baseTools, ...this.extraTools],
      gate: (inner, activation) => this.sentinel.wrap(inner, { tainted: activation.tainted, sessionId: activation.sessionId }),
      createHook: (person, task, description) => this.createHook(person, task, description),
      deliverReply: (task, person, text, key) => this.turns.deliverReply(task, person, text, key),
      leaseMs: deps.taskLeaseMs ?? 120_000,
      graceMs: deps.wakeupGraceMs,
      ...(deps.media && { media: deps.media.context }),
    });
    this.turns = new TurnRuntime({
      store,
      model: deps.model,
      tokens: deps.tokens,
      clock,
      logger,
      queue: this.queue,
      outbox: this.outbox,
      tasks: this.tasks,
      typing: (personId) => this.startTyping(personId),
    });
    registerCoreCommands(this.commands, { store, clock });
    registerSettingsCommands(this.commands, { store, clock, resumeDue: (personId) => this.resumeDue(personId) });
    registerSentinelCommands(this.commands, this.views);
    this.access = new AccessControl({ store, clock, logger, allowFrom: deps.allowFrom ?? [], channel: (name) => this.adapters.get(name) });
    this.access.registerCommands(this.commands);
    this.pressHandlers.push(this.approvals.press);
    this.inbound = new InboundHandler({
      store,
      clock,
      logger,
      commands: this.commands,
      unknownSender: async (event) => (event.channel === "local" ? this.localPerson(event) : this.access.unknownSender(event)),
      onMessage: (person) => void this.turns.requestTurn(person.id),
      answer: (person, event, text) => this.answer(person, event, text),
      pressHandlers: () => this.pressHandlers,
      links: this.access.links,
      ...(deps.media && { media: deps.media.intake }),
    });
    const personOf = (data: Record<string, unknown>) => asId("person", String(data.personId));
    const taskOf = (data: Record<string, unknown>) => asId("task", String(data.taskId));
    scheduler.define(outboxJobName, async (job) => this.outbox.deliver(personOf(job.data)));
    // As many wake-ups at once as activations (Agenda's default of 5 would queue a 09:00 rush).
    const concurrency = deps.maxConcurrentActivations ?? 16;
    scheduler.define(jobNames.wake, async (job) => this.tasks.onWake(taskOf(job.data), job.dueAt), { lockLifetimeMs: 5 * 60_000, concurrency });
    scheduler.define(resumeJobName, async (job) => this.tasks.onResume(taskOf(job.data)), { concurrency });
    scheduler.define(approvalExpiryJobName, async () => void (await this.approvals.expire()));
    scheduler.define(digestJobName, async (job) => void (await this.notifier.sendDigest(personOf(job.data))));
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
    this.extraTools.push(...tools);
  }

  onPress(handler: PressHandler): void {
    this.pressHandlers.push(handler);
  }

  /** Entry point for adapters: resolves when the event is durably recorded (acknowledge the platform then). */
  handleInbound = (event: InboundEvent): Promise<InboundOutcome> => this.inbound.handle(event);

  /**
   * Starts every registered channel (a channel that fails to start is reported and the others keep
   * running), recovers interrupted and due work, and delivers pending outbound messages.
   */
  async start(): Promise<{ started: ChannelName[]; failed: { channel: ChannelName; error: string }[] }> {
    const started: ChannelName[] = [];
    const failed: { channel: ChannelName; error: string }[] = [];
    for (const [name, adapter] of this.adapters) {
      try {
        await adapter.start(this.handleInbound);
        started.push(name);
      } catch (err) {
        this.adapters.delete(name);
        failed.push({ channel: name, error: (err as Error).message });
        this.deps.logger.error({ channel: name, err }, "channel failed to start; the others keep running");
      }
    }
    await this.tasks.recover({ takeOverStaleLeases: this.deps.singleProcess });
    await this.turns.recover();
    void this.outbox.deliver().catch((err: unknown) => this.deps.logger.error({ err }, "outbox delivery failed"));
    return { started, failed };
  }

  /** Stops channels and waits (up to `deadlineMs`) for running activations. */
  async stop(deadlineMs: number): Promise<void> {
    await this.queue.drain(deadlineMs);
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
    await this.outbox.deliver(person.id);
  }

  /**
   * An outside service called a webhook. The secret (header `X-Familiar-Hook-Secret`) is compared in
   * constant time with the stored hash; the body resumes every task waiting for the hook as untrusted
   * data. Returns `unknown` (404), `forbidden` (401) or the number of tasks resumed.
   */
  async handleHookEvent(hookId: string, secret: string, body: string): Promise<{ status: "unknown" } | { status: "forbidden" } | { status: "accepted"; resumed: number }> {
    const { store, clock } = this.deps;
    const hook = await store.hooks.getHook(asId("hook", hookId));
    if (!hook) return { status: "unknown" };
    const given = createHash("sha256").update(secret).digest();
    const expected = Buffer.from(hook.secretHash, "hex");
    if (expected.length !== given.length || !timingSafeEqual(given, expected)) {
      await store.audit.appendAudit({ personId: hook.personId, kind: "hook.rejected", summary: `webhook ${hook.id}: wrong secret`, data: { hookId: hook.id } });
      return { status: "forbidden" };
    }
    await store.hooks.touchHook(hook.id, clock.now());
    const waiting = await store.tasks.findWaitingTasks({ kind: "event", hookId: hook.id });
    await store.audit.appendAudit({ personId: hook.personId, kind: "hook.event", summary: `webhook "${hook.description}" received; resuming ${waiting.length} task(s)`, data: { hookId: hook.id, bytes: body.length } });
    for (const task of waiting) {
      void this.tasks.run(task.id, { trigger: `webhook event "${hook.description}"`, from: "waiting", observations: [{ source: `webhook ${hook.id}`, text: body }] });
    }
    return { status: "accepted", resumed: waiting.length };
  }

  /** Creates a webhook for a task and sends its URL and secret to the person directly (never to the model). */
  private async createHook(person: Person, task: Task, description: string): Promise<HookId> {
    const { store, clock } = this.deps;
    const secret = randomBytes(24).toString("base64url");
    const hook = await store.hooks.createHook({ personId: person.id, description, secretHash: createHash("sha256").update(secret).digest("hex") });
    const url = `${this.deps.publicUrl().replace(/\/$/, "")}/hooks/${hook.id}`;
    await store.outbox.enqueueOutbound(
      {
        personId: person.id,
        deliveryKey: `hook:${hook.id}`,
        text: `To trigger “${description}” (task: ${task.title}), have the service send an HTTP POST to ${url} with the header \`X-Familiar-Hook-Secret: ${secret}\`. Keep the secret private.`,
      },
      clock.now(),
    );
    void this.outbox.deliver(person.id);
    return hook.id;
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
        void this.outbox.deliver(person.id);
        told++;
      }
      after = page.next;
    } while (after);
    return told;
  }

  /** After /resume: runs the person's pending work that became due while paused. */
  private async resumeDue(personId: PersonId): Promise<number> {
    const { store, clock } = this.deps;
    const page = await store.tasks.listTasks({ personId, status: ["pending", "waiting"] }, { limit: 500 });
    let count = 0;
    for (const task of page.items) {
      const state = task.state;
      const due = state.status === "pending" ? (task.notBefore ?? clock.now()) : state.status === "waiting" && state.wait.kind === "time" ? state.wait.until : null;
      if (due && due <= clock.now()) {
        void this.tasks.onWake(task.id, due);
        count++;
      }
    }
    return count;
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

  /** Starts a typing indicator on the person's most recent channel, renewed every 4 s until stopped. */
  private startTyping(personId: PersonId): () => void {
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const tick = async () => {
      if (stopped) return;
      const [last] = await this.deps.store.conversation.listRecentMessages(personId, 1);
      const adapter = last && this.adapters.get(last.channel);
      const identity = adapter && (await this.deps.store.persons.listIdentities(personId)).find((i) => i.channel === last.channel);
      if (adapter?.typing && identity && !stopped) await adapter.typing({ accountId: identity.accountId, address: identity.address }).catch(() => undefined);
      if (!stopped) timer = setTimeout(() => void tick(), 4_000).unref();
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }
}
