import type { Clock } from "../clock.js";
import { asId } from "../ids.js";
import type { Store } from "../storage/index.js";
import type { Person } from "../persons/records.js";

/** A chat command's answer (markdown). */
export type CommandReply = { text: string };

/** A command handler; `args` is the text after the command word, trimmed. */
export type CommandHandler = (input: { person: Person; args: string; channel: string; accountId: string }) => Promise<CommandReply>;

/**
 * Chat commands (`/help`, `/memory`, …). Later parts register more (`/permissions`, `/pause`, …).
 * A command is handled directly, outside the conversation: neither it nor its answer reaches the model.
 */
export class CommandRegistry {
  private readonly handlers = new Map<string, { help: string; handler: CommandHandler }>();

  register(name: string, help: string, handler: CommandHandler): void {
    this.handlers.set(name.toLowerCase(), { help, handler });
  }

  /**
   * Parses `/name args` (also `/name@BotName args` as Telegram sends in groups); null when the text is
   * not shaped like a command. Unknown names parse too: `run` answers them with the help text, so a
   * mistyped command never reaches the model as conversation. A name is 1–32 letters, digits or
   * underscores starting with a letter (Telegram Bot API's command rule); `/path/to/file …` and
   * `/ text` are not commands.
   */
  parse(text: string): { name: string; args: string } | null {
    const match = /^\/([a-z][a-z0-9_]{0,31})(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(text.trim());
    if (!match) return null;
    return { name: match[1]!.toLowerCase(), args: (match[2] ?? "").trim() };
  }

  /** Whether `name` is a registered command. */
  has(name: string): boolean {
    return this.handlers.has(name.toLowerCase());
  }

  /** Runs a command; an unknown one answers with the list of commands. */
  async run(name: string, input: Parameters<CommandHandler>[0]): Promise<CommandReply> {
    const entry = this.handlers.get(name.toLowerCase());
    if (!entry) return { text: `I don't know the command /${name}. These are the ones I know:\n${this.helpText()}` };
    return entry.handler(input);
  }

  helpText(): string {
    return [...this.handlers].map(([name, { help }]) => `/${name} — ${help}`).join("\n");
  }
}

/** Registers the commands of the conversation part: /start, /help, /memory, /goals. */
export function registerCoreCommands(registry: CommandRegistry, deps: { store: Store; clock: Clock }): void {
  const { store, clock } = deps;
  registry.register("start", "introduction", async ({ person }) => ({
    text: `Hi ${person.displayName}! I'm Familiar. Talk to me here like you would to a friend who can keep track of things for weeks. Try /help for commands.`,
  }));
  registry.register("help", "list commands", async () => ({ text: registry.helpText() }));
  registry.register(
    "memory",
    "list what I remember; `/memory delete <id>`, `/memory edit <id> <new text>`",
    async ({ person, args }) => {
      const [verb, id, ...rest] = args.split(/\s+/);
      if (verb === "delete" && id) {
        const removed = await store.memory.deleteMemory(person.id, asId("memory", id));
        return { text: removed ? `Forgotten: ${id}` : `No memory item ${id}.` };
      }
      if (verb === "edit" && id && rest.length > 0) {
        try {
          const item = await store.memory.updateMemory(person.id, asId("memory", id), { text: rest.join(" ") });
          return { text: `Updated ${item.id}: ${item.text}` };
        } catch {
          return { text: `No memory item ${id}.` };
        }
      }
      const page = await store.memory.listMemory(person.id, { limit: 50 });
      const now = clock.now();
      const live = page.items.filter((m) => !m.expiresAt || m.expiresAt > now);
      if (live.length === 0) return { text: "I don't remember anything about you yet." };
      const lines = live.map((m) => `• \`${m.id}\` (${m.kind}) ${m.text}${m.taint ? ` — ⚠️ from outside content (${m.taint.source})` : ""}`);
      return { text: `What I remember:\n${lines.join("\n")}\n\nDelete with /memory delete <id>, edit with /memory edit <id> <text>.` };
    },
  );
  registry.register("goals", "list your goals", async ({ person }) => {
    const page = await store.goals.listGoals(person.id, { status: ["active", "paused"] }, { limit: 50 });
    if (page.items.length === 0) return { text: "No goals yet. Tell me what you'd like me to keep an eye on." };
    return { text: page.items.map((g) => `• \`${g.id}\` ${g.title} (${g.status})${g.taint ? ` — ⚠️ from outside content (${g.taint.source})` : ""}`).join("\n") };
  });
}
