import type { Clock } from "../clock.js";
import { asId } from "../ids.js";
import type { GoalControl } from "../runtime/index.js";
import type { Store } from "../storage/index.js";
import { isValidTimeZone } from "../time/index.js";
import type { CommandRegistry } from "./commands.js";

const hhmm = /^([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * Commands that change how and when Familiar works in the background: /pause, /resume, /quiet,
 * /proactivity, /digest, /timezone, and /goal pause|resume|cancel <id>.
 */
export function registerSettingsCommands(
  registry: CommandRegistry,
  deps: { store: Store; clock: Clock; goals: Pick<GoalControl, "pause" | "resume" | "cancel" | "releaseHeld"> },
): void {
  const { store } = deps;
  registry.register("pause", "pause all background work (reminders and check-ins wait)", async ({ person }) => {
    await store.persons.updatePerson(person.id, { paused: true });
    return { text: "Paused. I won't do anything in the background until you send /resume." };
  });
  registry.register("resume", "resume background work", async ({ person }) => {
    await store.persons.updatePerson(person.id, { paused: false });
    const due = await deps.goals.releaseHeld(person.id);
    return { text: due > 0 ? `Resumed. Catching up on ${due} thing(s) that came due while paused.` : "Resumed." };
  });
  registry.register("quiet", "quiet hours, e.g. `/quiet 22:00-07:00` (or `/quiet off`)", async ({ person, args }) => {
    if (args === "off") {
      await store.persons.updatePerson(person.id, { quietHours: null });
      return { text: "Quiet hours off." };
    }
    const [from, to] = args.split("-").map((s) => s.trim());
    if (!from || !to || !hhmm.test(from) || !hhmm.test(to) || from === to) return { text: "Use /quiet HH:MM-HH:MM, e.g. /quiet 22:00-07:00, or /quiet off." };
    await store.persons.updatePerson(person.id, { quietHours: { from, to } });
    return { text: `Quiet hours ${from}–${to} (${person.timeZone}). I'll hold anything that isn't urgent until they end.` };
  });
  registry.register("proactivity", "how readily I message first: off, low, normal, high", async ({ person, args }) => {
    const level = args.toLowerCase();
    if (level !== "off" && level !== "low" && level !== "normal" && level !== "high") {
      return { text: `${args ? `“${args}” is not a proactivity level. ` : ""}Proactivity is ${person.proactivity}. Use /proactivity off|low|normal|high.` };
    }
    await store.persons.updatePerson(person.id, { proactivity: level });
    return { text: `Proactivity set to ${level}.` };
  });
  registry.register("digest", "when held messages arrive as a digest, e.g. `/digest 18:00` (`/digest off`: when quiet hours end)", async ({ person, args }) => {
    if (args === "off") {
      await store.persons.updatePerson(person.id, { digestTime: null });
      return { text: "No fixed digest time: held messages arrive when your quiet hours end." };
    }
    if (!hhmm.test(args)) {
      const current = person.digestTime ? `Your digest time is ${person.digestTime}.` : "Held messages arrive when your quiet hours end.";
      return { text: `${args ? `“${args}” is not a time like 18:30. ` : ""}${current} Use /digest HH:MM or /digest off.` };
    }
    await store.persons.updatePerson(person.id, { digestTime: args });
    return { text: `Digest at ${args} (${person.timeZone}).` };
  });
  registry.register("timezone", "your time zone, e.g. `/timezone Europe/Berlin`", async ({ person, args }) => {
    if (!isValidTimeZone(args)) {
      return { text: `${args ? `“${args}” is not a time zone I know. ` : ""}Your time zone is ${person.timeZone}. Use an IANA name such as /timezone Asia/Tokyo.` };
    }
    await store.persons.updatePerson(person.id, { timeZone: args });
    return { text: `Time zone set to ${args}.` };
  });
  registry.register("goal", "`/goal pause|resume|cancel <id>`", async ({ person, args }) => {
    const [verb, id] = args.split(/\s+/);
    const goal = id ? await store.goals.getGoal(asId("goal", id)) : null;
    if (!goal || goal.personId !== person.id) return { text: `${id ? `No goal ${id}. ` : ""}Use /goal pause|resume|cancel <id> with an id from /goals.` };
    const action = verb === "pause" ? deps.goals.pause : verb === "resume" ? deps.goals.resume : verb === "cancel" ? deps.goals.cancel : null;
    if (!action) return { text: "Use /goal pause|resume|cancel <id>." };
    return { text: (await action(person.id, goal.id)).notice };
  });
}
