import type { ChannelAdapter, InboundEvent } from "./channels/port.js";
import type { Clock } from "./clock.js";
import type { TokenCounter } from "./context/tokens.js";
import type { ExecuteTool } from "./harness/types.js";
import { asId, type PersonId } from "./ids.js";
import { CommandRegistry, registerCoreCommands } from "./inbound/commands.js";
import { InboundHandler, type PressHandler, type UnknownSenderPolicy } from "./inbound/handler.js";
import type { Logger } from "./log.js";
import type { ModelClient } from "./model/port.js";
import { OutboxDelivery } from "./outbox/delivery.js";
import { PersonQueue } from "./runtime/person-queue.js";
import { TurnRuntime } from "./runtime/turns.js";
import type { Scheduler } from "./scheduling/scheduler.js";
import type { Store } from "./storage/ports.js";
import type { ChannelName, Person } from "./storage/types.js";
import { coreTools } from "./tools/core-tools.js";
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
  /** Most activations running at once across all persons. */
  maxConcurrentActivations?: number;
  /** Who an unknown sender is on channels other than the local chat (messenger pairing); default: nobody. */
  unknownSender?: UnknownSenderPolicy;
  /** Wraps every tool call (journal, Sentinel). */
  executeTool?: ExecuteTool;
}

/**
 * The core's public face for adapters and the composition root: inbound events in, outbound
 * messages out through the registered channel adapters, with commands, turns and the outbox wired.
 */
export class Familiar {
  readonly commands = new CommandRegistry();
  readonly queue: PersonQueue;
  readonly outbox: OutboxDelivery;
  readonly turns: TurnRuntime;
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
    this.turns = new TurnRuntime({
      store,
      model: deps.model,
      tokens: deps.tokens,
      clock,
      logger,
      queue: this.queue,
      outbox: this.outbox,
      tools: () => [...this.baseTools, ...this.extraTools],
      budget: deps.contextTokenBudget,
      maxSteps: deps.maxSteps,
      typing: (personId) => this.startTyping(personId),
      ...(deps.executeTool && { executeTool: deps.executeTool }),
    });
    registerCoreCommands(this.commands, { store, clock });
    this.inbound = new InboundHandler({
      store,
      clock,
      logger,
      commands: this.commands,
      unknownSender: async (event) => (event.channel === "local" ? this.localPerson(event) : (deps.unknownSender?.(event) ?? null)),
      onMessage: (person) => void this.turns.requestTurn(person.id),
      answer: (person, event, text) => this.answer(person, event, text),
      pressHandlers: () => this.pressHandlers,
    });
    scheduler.define(outboxJobName, async (job) => {
      await this.outbox.deliver(asId("person", String(job.data.personId)));
    });
  }

  /** Registers a channel adapter (before `start`). */
  addChannel(adapter: ChannelAdapter): void {
    this.adapters.set(adapter.channel, adapter);
  }

  /** Adds tools every activation gets (later parts: web tools through Sentinel). */
  addTools(tools: ToolDefinition[]): void {
    this.extraTools.push(...tools);
  }

  onPress(handler: PressHandler): void {
    this.pressHandlers.push(handler);
  }

  /** Entry point for adapters: resolves when the event is durably recorded (ack the platform then). */
  handleInbound = (event: InboundEvent): Promise<void> => this.inbound.handle(event);

  /**
   * Starts every registered channel (a channel that fails to start is reported and the others keep
   * running), re-runs interrupted turns and delivers pending outbound messages.
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

  /** Sends a direct answer through the outbox on the event's channel. */
  async answer(person: Person, event: InboundEvent, text: string): Promise<void> {
    await this.deps.store.outbox.enqueueOutbound(
      { personId: person.id, deliveryKey: `answer:${event.channel}:${event.updateId}`, text, channel: event.channel },
      this.deps.clock.now(),
    );
    await this.outbox.deliver(person.id);
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
