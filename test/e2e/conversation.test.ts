import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { failureText } from "../../core/runtime/after-activation.js";
import { httpError, startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { settled, startTestApp, type TestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/wait.js";

/** Tokens of a request as the model would see it: every message's content and the tool schemas. */
function requestTokens(r: RecordedRequest): number {
  return countTokens(JSON.stringify(r.body.messages)) + countTokens(JSON.stringify(r.body.tools ?? []));
}

function systemText(r: RecordedRequest): string {
  const first = r.messages[0];
  return first && first.role === "system" && typeof first.content === "string" ? first.content : "";
}

describe("talking to Familiar through the local chat (real openai SDK against a scripted fake)", () => {
  let model: FakeOpenAIServer;
  let app: TestApp;

  beforeEach(async () => {
    model = await startFakeOpenAI();
    app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake-model" });
  });
  afterEach(async () => {
    await app.close();
    await model.close();
  });

  it("holds a conversation of several turns with tool calls, in order, in one conversation", async () => {
    model.push(
      toolCall("create_goal", { title: "Plan a weekend baking project", description: "every Friday, for Mia" }),
      text("Done — I'll plan a baking project with you every Friday."),
      text("Sure, banana bread it is."),
    );
    await app.say("ana", "every Friday plan a weekend baking project for my daughter");
    const first = await app.replies("ana", 1);
    expect(first[0]!.text).toBe("Done — I'll plan a baking project with you every Friday.");

    await app.say("ana", "let's start with banana bread");
    const both = await app.replies("ana", 2);
    expect(both[1]!.text).toBe("Sure, banana bread it is.");

    // The tool really ran: the goal is stored for this person and shown to the model next turn.
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    const goals = await app.store.goals.listGoals(person.personId);
    expect(goals.items.map((g) => g.title)).toEqual(["Plan a weekend baking project"]);
    expect(systemText(model.requests[2]!)).toContain("Plan a weekend baking project");

    // The second request carried the tool result; the third saw the whole conversation in order.
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool" });
    const thirdUserTexts = model.requests[2]!.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(thirdUserTexts).toEqual(["every Friday plan a weekend baking project for my daughter", "let's start with banana bread"]);
    const conversation = await app.store.conversation.listRecentMessages(person.personId, 10);
    expect(conversation.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("sends invalid tool arguments back to the model as a tool error and never runs the tool", async () => {
    model.push(toolCall("create_goal", "{not json"), toolCall("create_goal", { title: "" }), text("Sorry, I could not create that goal."));
    await app.say("ana", "make a goal");
    const [reply] = await app.replies("ana", 1);
    expect(reply!.text).toBe("Sorry, I could not create that goal.");
    const toolMessages = model.requests.slice(1).map((r) => r.messages.at(-1));
    expect(toolMessages[0]).toMatchObject({ role: "tool" });
    expect(String(toolMessages[0]!.content)).toMatch(/INVALID_JSON|not valid JSON/i);
    expect(String(toolMessages[1]!.content)).toMatch(/INVALID_ARGUMENTS|title/i);
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    expect((await app.store.goals.listGoals(person.personId)).items).toHaveLength(0);
  });

  it("retries a 429 and then answers", async () => {
    model.push(httpError(429, { retryAfter: 0 }), text("Here I am."));
    await app.say("ana", "hello?");
    const [reply] = await app.replies("ana", 1);
    expect(reply!.text).toBe("Here I am.");
    expect(model.requests).toHaveLength(2);
  });

  it("answers an empty model reply with a short honest error after one retry, never a placeholder (M1)", async () => {
    model.push(text(null), text("   "));
    await app.say("ana", "what now?");
    const [reply] = await app.replies("ana", 1);
    expect(reply!.text).toBe(failureText("empty"));
    expect(model.requests).toHaveLength(2);
  });

  it("never loses or reorders a message that arrives while a turn runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    model.push(async () => {
      await gate;
      return text("first answer");
    });
    model.push((r) => text(`second answer saw: ${r.lastUserText}`));
    await app.say("ana", "one");
    // Wait until the first turn is with the model, then send a second message.
    await waitFor(() => model.requests.length > 0, "the first turn's model call");
    await app.say("ana", "two");
    release();
    const replies = await app.replies("ana", 2);
    expect(replies.map((m) => m.text)).toEqual(["first answer", "second answer saw: two"]);
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    const conversation = await app.store.conversation.listRecentMessages(person.personId, 10);
    expect(conversation.map((m) => `${m.role}:${m.text}`)).toEqual([
      "user:one",
      "user:two",
      "assistant:first answer",
      "assistant:second answer saw: two",
    ]);
  });

  it("deduplicates a retried POST with the same client message id", async () => {
    model.push(text("only once"));
    await app.say("ana", "hi", "client-1");
    await app.say("ana", "hi", "client-1");
    await app.replies("ana", 1);
    // Nothing more is due or running: a second turn for the retry would have run by now.
    await settled(app);
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    const conversation = await app.store.conversation.listRecentMessages(person.personId, 10);
    expect(conversation.filter((m) => m.role === "user")).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
  });

  it("remembers, retrieves the memory in a later turn, and lets the person edit and delete it", async () => {
    model.push(toolCall("remember", { kind: "relationship", text: "Ana's daughter is called Mia" }), text("Noted."));
    await app.say("ana", "my daughter is called Mia");
    await app.replies("ana", 1);
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    const items = (await app.store.memory.listMemory(person.personId)).items;
    expect(items).toHaveLength(1);
    expect(items[0]!.provenance.messageId).not.toBeNull();
    expect(items[0]!.provenance.channel).toBe("local");

    model.push(text("Mia, of course."));
    await app.say("ana", "what is my daughter's name?");
    await app.replies("ana", 2);
    expect(systemText(model.requests.at(-1)!)).toContain("Ana's daughter is called Mia");

    // Edit and delete through the dashboard API.
    const base = `${app.url}/api/persons/${person.personId}/memory`;
    const listed = (await (await fetch(base)).json()) as { items: { id: string; text: string }[] };
    expect(listed.items.map((m) => m.text)).toEqual(["Ana's daughter is called Mia"]);
    const id = listed.items[0]!.id;
    const bad = await fetch(`${base}/${id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ confidence: 7 }) });
    expect(bad.status).toBe(400);
    const patched = await fetch(`${base}/${id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "Ana's daughter is Mia (8)" }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { text: string }).text).toBe("Ana's daughter is Mia (8)");

    // /memory in chat lists it, without reaching the model.
    const before = model.requests.length;
    await app.say("ana", "/memory");
    const replies = await app.replies("ana", 3);
    expect(replies[2]!.text).toContain("Ana's daughter is Mia (8)");
    expect(model.requests.length).toBe(before);

    expect((await fetch(`${base}/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(`${base}/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await app.store.memory.listMemory(person.personId)).items).toHaveLength(0);
  });

  it("keeps the tokens per request bounded as the conversation grows to thousands of messages", async () => {
    // First turn with a short history.
    model.push(text("short history answer"));
    await app.say("ana", "hello");
    await app.replies("ana", 1);
    const small = requestTokens(model.requests[0]!);

    // Grow the conversation to 3,000 messages directly in the store (as if months of talk).
    const person = (await app.store.persons.findIdentity("local", "ana"))!;
    for (let i = 0; i < 3_000; i++) {
      await app.store.conversation.appendMessage({
        personId: person.personId,
        role: i % 2 === 0 ? "user" : "assistant",
        channel: "local",
        text: `message ${i}: ${"we talked about flights, baking and the weather in some detail ".repeat(3)}`,
        taskId: null,
      });
    }
    model.push(text("long history answer"));
    const before = model.requests.length;
    await app.say("ana", "and now?");
    await app.replies("ana", 2);
    const big = requestTokens(model.requests[before]!);
    expect(big).toBeLessThan(16_000);
    // A plain turn stays small even with a long history (the verbatim window is capped).
    expect(big).toBeLessThan(6_000);
    expect(big).toBeGreaterThan(small);
  });
});
