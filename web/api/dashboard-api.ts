import { randomUUID } from "node:crypto";
import { Router, type Response } from "express";
import { z } from "zod";
import { channelInWords } from "../../core/channels/index.js";
import type { Clock } from "../../core/clock.js";
import type { AccessControl, CommandRegistry } from "../../core/inbound/index.js";
import type { ApprovalFlow, GoalControl, ModelBudget } from "../../core/runtime/index.js";
import type { SentinelViews } from "../../core/sentinel/index.js";
import { asId, type PersonId } from "../../core/ids.js";
import { type Store } from "../../core/storage/index.js";
import { channelNames, type ChannelName } from "../../core/channels/index.js";
import { type Goal } from "../../core/goals/index.js";
import { type MemoryItem } from "../../core/memory/index.js";
import { type Person } from "../../core/persons/index.js";
import { type Task } from "../../core/tasks/index.js";
import { resolveTimeZone } from "../../core/time/index.js";
import { deliveriesOf } from "./deliveries.js";
import { plainErrors } from "./plain-errors.js";
import { activityApi } from "./activity-api.js";
import { channelsInWords } from "./activity-words.js";
import { nextWakeAt, nowView } from "./now-view.js";
import { checkInWords, recentDecisions } from "./goal-words.js";
import { hostPath, methodPhrase, parseGrantPattern, type GrantPattern } from "../../core/policy/index.js";
import { localAccountOf, webContext } from "./auth.js";

const page = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(200).optional(),
});
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "Please give times like 18:30.");
/** A typed time zone (IANA name in any case, or an unambiguous city) as its canonical IANA name. */
const timeZoneInput = z.string().transform((typed, ctx) => {
  const zone = resolveTimeZone(typed);
  if (zone) return zone;
  ctx.addIssue({ code: "custom", message: typed.trim() ? `“${typed.trim().slice(0, 64)}” is not a time zone Familiar knows. Type a city such as Berlin, or pick a zone such as Europe/Berlin from the list.` : "Please choose a time zone." });
  return z.NEVER;
});

const settingsPatch = z
  .object({
    displayName: z.string().trim().min(1, "Please enter a name.").max(64, "A name can be at most 64 characters.").optional(),
    timeZone: timeZoneInput.optional(),
    proactivity: z.enum(["off", "low", "normal", "high"]).optional(),
    quietHours: z.object({ from: hhmm, to: hhmm }).nullable().optional(),
    digestTime: hhmm.nullable().optional(),
    personaName: z.string().trim().max(40, "Familiar's name can be at most 40 characters.").nullable().optional(),
    personaStyle: z.string().trim().max(500, "How Familiar should write can be at most 500 characters.").nullable().optional(),
    // Where Familiar reaches the person with messages it starts itself (see ReachPreference).
    reach: z
      .discriminatedUnion("mode", [
        z.object({ mode: z.literal("last") }).strict(),
        z.object({ mode: z.literal("messenger"), channel: z.enum(channelNames, { message: "Please choose one of your messengers." }) }).strict(),
        z.object({ mode: z.literal("all") }).strict(),
      ])
      .optional(),
  })
  .strict();

const memoryPatch = z
  .object({
    text: z.string().trim().min(1, "Please write what Familiar should remember. To remove it, use Forget.").max(1_000, "A memory can be at most 1,000 characters.").optional(),
    kind: z.enum(["fact", "preference", "relationship", "decision"]).optional(),
  })
  .strict()
  .refine((p) => p.text !== undefined || p.kind !== undefined, "Please change the text or the kind.");

/** Sends a 400 saying in sentences what is wrong (see plainErrors); returns null. */
function parse<S extends z.ZodType>(schema: S, input: unknown, res: Response): z.infer<S> | null {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  res.status(400).json({ error: plainErrors(result.error) });
  return null;
}


/** A memory item for the web app; `taint` says it was made from outside content, and from which (null: the person's own words). */
function memoryJson(m: MemoryItem) {
  return { id: m.id, kind: m.kind, text: m.text, confidence: m.confidence, provenance: m.provenance, taint: m.taint ? { source: m.taint.source } : null, expiresAt: m.expiresAt?.toISOString() ?? null, createdAt: m.createdAt.toISOString(), updatedAt: m.updatedAt.toISOString() };
}

/**
 * A task as the dashboard shows it. Under a paused goal a task that would wake (pending, or waiting
 * for a time) shows as `paused` with no next wake-up: the runtime does not wake it while the goal is
 * paused; resuming the goal brings its wake-up back.
 */
function taskJson(t: Task, goalStatus: Goal["status"] | null = null) {
  const wait = t.state.status === "waiting" ? t.state.wait.kind : null;
  const held = goalStatus === "paused" && (t.state.status === "pending" || t.state.status === "waiting");
  if (held) return { id: t.id, title: t.title, status: "paused", waitingFor: null, nextWakeAt: null, heldBy: "goal", updatedAt: t.updatedAt.toISOString() };
  return { id: t.id, title: t.title, status: t.state.status, waitingFor: wait, nextWakeAt: nextWakeAt(t)?.toISOString() ?? null, heldBy: null, updatedAt: t.updatedAt.toISOString() };
}

/**
 * The parts of the running core the web app uses, as typed calls: Sentinel's views (status, grants,
 * revocation), the person's goals, the approval cards and decisions, /link codes, and the chat
 * command registry (the web app adds its `/web` command).
 */
export interface WebCore {
  views: SentinelViews;
  goals: Pick<GoalControl, "pause" | "resume" | "cancel">;
  approvals: Pick<ApprovalFlow, "deliveredCard" | "decide">;
  access: Pick<AccessControl, "offerLink">;
  commands: Pick<CommandRegistry, "register">;
  /** The outbox's loop, woken when messages waiting for an unlinked channel must be re-routed. */
  outboxLoop: { poke(): void };
  /** Which persons have a web chat page open (told by the chat's live poll). */
  presence: { seen(personId: PersonId): void };
  /** The person's model use today and the daily budget (the Now tab shows it). */
  budget: Pick<ModelBudget, "state">;
}

/** Dependencies of the dashboard API. */
export interface DashboardApiDeps {
  store: Store;
  familiar: WebCore;
  clock: Clock;
  /** Channels running now, and their start-up problems, for the Messengers tab. */
  channelStatus: () => { channel: string; state: string }[];
}

/**
 * The dashboard's JSON API under `/api/web/`, always for the signed-in person only (mount behind
 * `requireSession`). Lists page with `{items, next}` (pass `next` back as `after`). Decisions are
 * typed calls into the core with the same rules as in chat: goal actions through `GoalControl` (as
 * `/goal`), approvals through the approval flow's `decide` (owner, pending, unexpired, first answer
 * wins, as a press on the card), revocation through Sentinel's views.
 */
export function dashboardApi(deps: DashboardApiDeps): Router {
  const { store, familiar, clock } = deps;
  const router = Router();

  router.get("/api/web/now", async (req, res) => {
    const { person } = webContext(req);
    const pending = (await store.approvals.listPendingApprovals(person.id)).filter((a) => a.expiresAt > clock.now()).length;
    res.json({ status: channelsInWords(await familiar.views.currentStatus(person.id)), pendingApprovals: pending, paused: person.paused, ...(await nowView(store, person, clock.now())), deliveries: await deliveriesOf(store, person, clock.now()), modelUse: await familiar.budget.state(person) });
  });

  router.get("/api/web/goals", async (req, res) => {
    const q = parse(page, req.query, res);
    if (!q) return;
    const { person } = webContext(req);
    const goals = await store.goals.listGoals(person.id, {}, { limit: q.limit, ...(q.after && { after: q.after }) });
    // The person's recent notification decisions, read once for every goal's past check-ins.
    const decisions = goals.items.length > 0 ? await recentDecisions(store, person.id) : [];
    const items = await Promise.all(
      goals.items.map(async (g: Goal) => {
        const tasks = await store.tasks.listTasks({ goalId: g.id }, { limit: 20 });
        return { id: g.id, title: g.title, status: g.status, checkIn: g.checkIn, checkIns: await checkInWords(store, g, decisions, clock.now()), createdAt: g.createdAt.toISOString(), tasks: tasks.items.map((t) => taskJson(t, g.status)) };
      }),
    );
    // Reminders and wake-ups without a goal, so nothing scheduled is invisible.
    const loose = q.after ? [] : (await store.tasks.listTasks({ personId: person.id, status: ["pending", "waiting"] }, { limit: 50 })).items.filter((t) => t.goalId === null && t.kind !== "turn");
    res.json({ items, next: goals.next ?? null, tasks: loose.map((t) => taskJson(t)) });
  });

  router.post("/api/web/goals/:id/:action", async (req, res) => {
    const { person } = webContext(req);
    const action = z.enum(["pause", "resume", "cancel"]).safeParse(req.params.action);
    if (!action.success) return void res.status(404).json({ error: "use pause, resume or cancel" });
    const goal = await store.goals.getGoal(asId("goal", String(req.params.id)));
    if (!goal || goal.personId !== person.id) return void res.status(404).json({ error: "No such goal of yours." });
    const result = await familiar.goals[action.data](person.id, goal.id);
    res.json({ notice: result.notice, status: result.ok ? result.goal.status : goal.status });
  });

  router.get("/api/web/approvals", async (req, res) => {
    const { person } = webContext(req);
    const now = clock.now();
    const pending = (await store.approvals.listPendingApprovals(person.id)).filter((a) => a.expiresAt > now);
    res.json({
      items: await Promise.all(
        pending.map(async (a) => {
          // The card as it was delivered (its buttons carry opaque ids only Sentinel can map).
          const card = await familiar.approvals.deliveredCard(a);
          return { id: a.id, summary: a.summary, text: card?.text ?? a.summary, ...(card?.card ? { card: card.card } : {}), buttons: card?.buttons ?? [], expiresAt: a.expiresAt.toISOString(), createdAt: a.createdAt.toISOString() };
        }),
      ),
      next: null,
    });
  });

  router.post("/api/web/approvals/:id/press", async (req, res) => {
    const body = parse(z.object({ buttonId: z.string().min(1).max(200), clientActionId: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/).optional() }).strict(), req.body, res);
    if (!body) return;
    const { person } = webContext(req);
    const request = await store.approvals.getApprovalRequest(asId("approval", String(req.params.id)));
    if (!request || request.personId !== person.id) return void res.status(404).json({ error: "No such request of yours." });
    const card = await familiar.approvals.deliveredCard(request);
    if (!card || !card.buttons.some((b) => b.id === body.buttonId)) return void res.status(400).json({ error: "That is not one of this card's buttons." });
    const account = await localAccountOf(store, person);
    // Decided on the card's copy in the person's chat log: Sentinel accepts that as the card.
    const outcome = await familiar.approvals.decide({ person, buttonId: body.buttonId, via: { channel: "local", accountId: account, messageRef: card.pressRef }, actionId: body.clientActionId ?? randomUUID() });
    const after = await store.approvals.getApprovalRequest(request.id);
    res.json({ outcome: outcome.status, notice: outcome.notice ?? null, status: after?.status ?? request.status });
  });

  router.use(activityApi(deps));

  router.get("/api/web/permissions", async (req, res) => {
    const { person } = webContext(req);
    const grants = await familiar.views.listGrantsView(person.id);
    const patterns = new Map((await store.grants.listActiveGrants(person.id, clock.now())).map((a) => [a.id, parseGrantPattern(a.pattern)]));
    const q = parse(page, req.query, res);
    if (!q) return;
    const start = q.after ? Math.max(0, grants.findIndex((g) => g.id === q.after) + 1) : 0;
    const slice = grants.slice(start, start + q.limit);
    res.json({ items: slice.map((g) => ({ ...g, words: grantWords(g, patterns.get(g.id) ?? null) })), next: start + q.limit < grants.length ? (slice.at(-1)?.id ?? null) : null });
  });

  router.delete("/api/web/permissions/:id", async (req, res) => {
    const { person } = webContext(req);
    const result = await familiar.views.revokeGrant(person.id, asId("grant", String(req.params.id)));
    res.status(result.revoked ? 200 : 404).json({ notice: result.notice });
  });

  router.get("/api/web/memory", async (req, res) => {
    const q = parse(page.extend({ q: z.string().trim().max(200).optional() }), req.query, res);
    if (!q) return;
    const { person } = webContext(req);
    if (q.q) {
      const found = await store.memory.searchMemory(person.id, q.q, { limit: q.limit, now: clock.now() });
      return void res.json({ items: found.map(memoryJson), next: null });
    }
    const items = await store.memory.listMemory(person.id, { limit: q.limit, ...(q.after && { after: q.after }) });
    res.json({ items: items.items.map(memoryJson), next: items.next ?? null });
  });

  router.patch("/api/web/memory/:id", async (req, res) => {
    const body = parse(memoryPatch, req.body, res);
    if (!body) return;
    const { person } = webContext(req);
    const item = await store.memory.getMemory(asId("memory", String(req.params.id)));
    if (!item || item.personId !== person.id) return void res.status(404).json({ error: "No such memory of yours." });
    const updated = await store.memory.updateMemory(person.id, item.id, body);
    res.json(memoryJson(updated));
  });

  router.delete("/api/web/memory/:id", async (req, res) => {
    const { person } = webContext(req);
    const removed = await store.memory.deleteMemory(person.id, asId("memory", String(req.params.id)));
    res.status(removed ? 200 : 404).json({ notice: removed ? "Forgotten." : "No such memory of yours." });
  });

  router.get("/api/web/settings", (req, res) => void res.json(settingsJson(webContext(req).person)));

  router.patch("/api/web/settings", async (req, res) => {
    const body = parse(settingsPatch, req.body, res);
    if (!body) return;
    const { person } = webContext(req);
    const patch = { ...body, ...(body.personaName !== undefined && { personaName: body.personaName || null }), ...(body.personaStyle !== undefined && { personaStyle: body.personaStyle || null }) };
    res.json(settingsJson(await store.persons.updatePerson(person.id, patch)));
  });

  router.get("/api/web/messengers", async (req, res) => {
    const { person } = webContext(req);
    const identities = await store.persons.listIdentities(person.id);
    const status = new Map(deps.channelStatus().map((c) => [c.channel, c.state]));
    res.json({
      items: identities.map((i) => ({ channel: i.channel, accountId: i.accountId, linkedAt: i.createdAt.toISOString(), unreachable: i.unreachable?.reason ?? null, running: status.get(i.channel) ?? "not running" })),
      channels: deps.channelStatus(),
    });
  });

  router.delete("/api/web/messengers/:channel/:accountId", async (req, res) => {
    const { person } = webContext(req);
    const channel = z.enum(channelNames).safeParse(req.params.channel);
    if (!channel.success) return void res.status(404).json({ error: "No such messenger." });
    const accountId = String(req.params.accountId);
    const identities = await store.persons.listIdentities(person.id);
    if (!identities.some((i) => i.channel === channel.data && i.accountId === accountId)) return void res.status(404).json({ error: "No such linked account of yours." });
    if (identities.length === 1) return void res.status(409).json({ error: "This is your only linked account; Familiar could not reach you without it." });
    await unlink(deps, person.id, channel.data, accountId);
    await store.audit.appendAudit({ personId: person.id, kind: "identity.unlinked", summary: `Unlinked ${channel.data} account ${accountId}`, data: { channel: channel.data, accountId }, at: clock.now() });
    res.json({ notice: `Unlinked your ${channel.data} account ${accountId}. Messages from it now count as a stranger's.` });
  });

  router.post("/api/web/messengers/link", async (req, res) => {
    const { person } = webContext(req);
    res.json({ notice: familiar.access.offerLink(person) });
  });

  return router;
}

function settingsJson(p: Pick<Person, "displayName" | "timeZone" | "locale" | "proactivity" | "quietHours" | "digestTime" | "paused" | "personaName" | "personaStyle" | "reach">) {
  return { displayName: p.displayName, timeZone: p.timeZone, locale: p.locale, proactivity: p.proactivity, quietHours: p.quietHours, digestTime: p.digestTime, paused: p.paused, personaName: p.personaName, personaStyle: p.personaStyle, reach: p.reach };
}

/** Unlinks an account; what waits for it in the outbox is re-routed now (see OutboxDelivery), not when its retry is due. */
async function unlink(deps: DashboardApiDeps, personId: PersonId, channel: ChannelName, accountId: string): Promise<void> {
  await deps.store.persons.removeIdentity(personId, channel, accountId);
  await deps.store.outbox.wakeLane({ personId, lane: channel, now: deps.clock.now() });
  deps.familiar.outboxLoop.poke();
}


/**
 * A grant in words: "Send data (POST) to api.example.com/notes — always (allowed in the web chat)".
 * From the grant's pattern when it parses (method and destinations), else Sentinel's description.
 */
function grantWords(g: { capability: string; target: string; scope: string; grantedVia: string }, pattern: GrantPattern | null): string {
  const via = g.grantedVia === "local" ? "in the web chat" : `on ${channelInWords(g.grantedVia)}`;
  const targets = pattern?.targets.map((t) => (t.kind === "url" ? hostPath(t, t.paths !== "any") + (t.paths === "any" ? " (any page)" : "") : t.kind === "file" ? `the file ${t.path}` : t.kind === "recipient" ? t.address : t.value)) ?? [];
  const what = pattern && pattern.digest === null && targets.length > 0 ? methodPhrase(pattern.method, targets.join(", ")) : g.target.charAt(0).toUpperCase() + g.target.slice(1);
  return `${what} — ${g.scope} (allowed ${via})`;
}
