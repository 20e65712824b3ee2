/**
 * The right time zone for a person first met on a messenger (issue 19 item 5), through the real
 * grammY client against the fake Bot API with a scripted model: the first time a time matters,
 * Familiar asks once, in words, with buttons guessed from the person's Telegram language and
 * "Another zone"; the model is not called until the person answers, so nothing is scheduled on a
 * zone they never chose; the answer is kept (`/timezone` shows it) and the waiting request is then
 * carried out in that zone. Someone who answers in words, or not at all, is not asked again, and
 * the model is told the zone is only a default.
 */
import { DateTime } from "luxon";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type FakeResponse, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates, type FakeMessage } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool, sleep, userTexts } from "../helpers/e2e.js";

const ANA = 42;

describe("a person first met on Telegram is asked for their time zone once, the first time a time matters", () => {
  let fake: FakeTelegramApi | null = null;
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;

  afterEach(async () => {
    await app?.close();
    app = null;
    await fake?.close();
    fake = null;
    await model?.close();
    model = null;
  });

  async function start(fallback: (r: RecordedRequest) => FakeResponse) {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}` });
    return { fake, model, app };
  }

  const inChat = (): FakeMessage[] => fake!.messages.filter((m) => m.chatId === String(ANA));
  async function messageIn(match: (m: FakeMessage) => boolean, what: string): Promise<FakeMessage> {
    await fake!.waitFor(() => inChat().some(match), 15_000, `${what}; have ${JSON.stringify(inChat().map((m) => m.text))}`);
    return inChat().find(match)!;
  }
  const buttonsOf = (m: FakeMessage) => (m.replyMarkup?.inline_keyboard ?? []).flat();
  const isQuestion = (m: FakeMessage) => m.text.includes("which time zone are you in?");
  const person = async () => (await app!.store.persons.getPerson((await app!.store.persons.findIdentity("telegram", String(ANA)))!.personId))!;

  /** A model that schedules what it is asked at the clock time named, in the zone its prompt gives. */
  function scheduler(r: RecordedRequest): FakeResponse {
    const last = lastTool(r);
    if (last !== null) return text(/scheduled wake-up/.test(last) ? "Done." : `Could not: ${last}`);
    // The turn's messages: the request, and a typed answer to the question after it.
    const said = userTexts(r).findLast((t) => /at \d/.test(t)) ?? userTexts(r).at(-1) ?? "";
    const zone = /Now: [^(]*\(([A-Za-z_/+-]+)/.exec(r.promptText)?.[1] ?? "UTC";
    const hour = /at (\d{1,2})(?::(\d{2}))?/.exec(said);
    if (!hour) return text(`echo: ${said}`);
    const at = DateTime.now().setZone(zone).plus({ days: 1 }).set({ hour: Number(hour[1]), minute: Number(hour[2] ?? 0), second: 0, millisecond: 0 });
    return toolCall("schedule_wakeup", { note: said, at: at.toISO(), notify: "always" });
  }

  it("asks with buttons from the Telegram language, keeps the request until a zone is tapped, then schedules it in that zone", async () => {
    const { fake, model } = await start(scheduler);
    fake.push(updates.text(ANA, "remind me tomorrow at 9 to call mom", { languageCode: "de" }));
    const question = await messageIn(isQuestion, "the time-zone question");
    expect(question.text).toMatch(/^Before I do that: which time zone are you in\? .*Tap yours below, or send me your city or zone/);
    const buttons = buttonsOf(question);
    expect(buttons.map((b) => b.callback_data)).toEqual(["tz:Europe/Berlin", "tz:Europe/Vienna", "tz:Europe/Zurich", "tz:other"]);
    expect(buttons[0]!.text).toMatch(/^Berlin \(now \d{2}:\d{2}\)$/);
    expect(buttons.at(-1)!.text).toBe("Another zone");
    // Nothing ran on a zone Ana never chose: the model was not even called.
    await sleep(300);
    expect(model.requests).toHaveLength(0);
    expect(await person()).toMatchObject({ timeZone: "UTC", timeZoneConfirmed: false });

    // "Another zone" asks for a name; a tap on Berlin answers.
    fake.push(updates.press(ANA, "tz:other", { messageId: question.messageId }));
    await messageIn((m) => m.text.startsWith("Send me your city or your zone's name"), "the request for a zone name");
    expect(model.requests).toHaveLength(0);
    fake.push(updates.press(ANA, "tz:Europe/Berlin", { messageId: question.messageId }));
    await messageIn((m) => m.text.startsWith("Thanks: your time zone is Europe/Berlin"), "the confirmation");
    await messageIn((m) => m.text === "Done.", "the reminder being set");
    expect(await person()).toMatchObject({ timeZone: "Europe/Berlin", timeZoneConfirmed: true });
    // The waiting request is what the model answered, with the zone Ana chose.
    const first = model.requests[0]!;
    expect(userTexts(first)).toContain("remind me tomorrow at 9 to call mom");
    expect(first.promptText).toMatch(/Now: [^\n]*\(Europe\/Berlin\)/);
    const [wakeup] = (await app!.store.tasks.listTasks({ personId: (await person()).id, kind: ["wakeup"] })).items;
    expect(DateTime.fromJSDate(wakeup!.notBefore!).setZone("Europe/Berlin").toFormat("HH:mm")).toBe("09:00");

    // Kept: /timezone says it, and the next time needs no question.
    fake.push(updates.text(ANA, "/timezone"));
    await messageIn((m) => m.text.startsWith("Your time zone is Europe/Berlin"), "/timezone's answer");
    const before = model.requests.length;
    fake.push(updates.text(ANA, "and remind me tomorrow at 18:30 to stretch", { languageCode: "de" }));
    await fake.waitFor(() => model.requests.length > before, 15_000, "the second request reaching the model");
    expect(inChat().filter(isQuestion)).toHaveLength(1);
  }, 45_000);

  it("takes a city typed back as the answer (guesses from the person's locale when Telegram sends no language)", async () => {
    const { fake } = await start(scheduler);
    fake.push(updates.text(ANA, "wake me at 7 tomorrow"));
    const question = await messageIn(isQuestion, "the time-zone question");
    // No language from Telegram: the person's locale (en-US) gives the guesses.
    expect(buttonsOf(question).map((b) => b.callback_data)).toEqual(["tz:America/New_York", "tz:America/Chicago", "tz:America/Los_Angeles", "tz:other"]);
    fake.push(updates.text(ANA, "Lisbon"));
    await messageIn((m) => m.text.startsWith("Thanks: your time zone is Europe/Lisbon"), "the confirmation");
    await messageIn((m) => m.text === "Done.", "the wake-up being set");
    expect(await person()).toMatchObject({ timeZone: "Europe/Lisbon", timeZoneConfirmed: true });
    const [wakeup] = (await app!.store.tasks.listTasks({ personId: (await person()).id, kind: ["wakeup"] })).items;
    expect(DateTime.fromJSDate(wakeup!.notBefore!).setZone("Europe/Lisbon").toFormat("HH:mm")).toBe("07:00");
  }, 45_000);

  it("releases the waiting request when the person writes something else, says the zone is only a default, and does not ask again", async () => {
    const { fake, model } = await start((r) => text(`echo: ${userTexts(r).at(-1) ?? ""}`));
    fake.push(updates.text(ANA, "book the dentist for Friday at 10"));
    await messageIn(isQuestion, "the time-zone question");
    fake.push(updates.text(ANA, "hmm, not sure"));
    await messageIn((m) => m.text === "echo: hmm, not sure", "the answer to both messages");
    const request = model.requests[0]!;
    expect(userTexts(request)).toEqual(expect.arrayContaining(["book the dentist for Friday at 10", "hmm, not sure"]));
    expect(request.promptText).toContain("the person has not told you their time zone");
    expect(await person()).toMatchObject({ timeZone: "UTC", timeZoneConfirmed: false, timeZoneAsk: { pendingSeq: null } });
    fake.push(updates.text(ANA, "ok then, at 11 instead"));
    await messageIn((m) => m.text === "echo: ok then, at 11 instead", "the next answer");
    expect(inChat().filter(isQuestion)).toHaveLength(1);
  }, 45_000);
});
